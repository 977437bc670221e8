"""`web_search`: a few compact results (title, URL, snippet) from Tavily, Exa or SearXNG."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from augure.common.errors import NotDone
from augure.config.tools import settings_for
from augure.tools.base import Egress, RunContext, ToolResult, describe, tool

if TYPE_CHECKING:
    from augure.config.settings import Config

SNIPPET_CHARS = 300
DEFAULT_BASE = {"tavily": "https://api.tavily.com", "exa": "https://api.exa.ai"}
KEY_VARIABLE = {"tavily": "TAVILY_API_KEY", "exa": "EXA_API_KEY"}


@settings_for("web_search")
class SearchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Literal["tavily", "exa", "searxng"] = "tavily"
    api_key: SecretStr | None = None
    base_url: str | None = None
    max_results: int = Field(default=5, ge=1, le=20)
    timeout_seconds: float = Field(default=20.0, gt=0, le=120)


class SearchError(NotDone):
    """A search that failed; the message is fit for the model."""


@dataclass(frozen=True)
class WebResult:
    title: str
    url: str
    snippet: str


def load_settings(config: Config) -> SearchSettings:
    try:
        return SearchSettings.model_validate(config.tools.section("web_search"))
    except ValidationError as exc:
        raise SearchError(f"fix [tools.web_search]: {describe(exc)}") from None


def api_key(settings: SearchSettings, environ: Mapping[str, str] | None = None) -> str | None:
    if settings.api_key is not None and settings.api_key.get_secret_value():
        return settings.api_key.get_secret_value()
    variable = KEY_VARIABLE.get(settings.provider)
    if variable is None:
        return None
    env = os.environ if environ is None else environ
    return env.get(variable) or None


def missing(settings: SearchSettings, environ: Mapping[str, str] | None = None) -> str | None:
    """What the owner must set for the chosen provider, or None when it is usable."""
    if settings.provider == "searxng":
        if not settings.base_url:
            return "set [tools.web_search] base_url to your SearXNG instance (JSON format on)"
        return None
    if api_key(settings, environ) is None:
        return f"set {KEY_VARIABLE[settings.provider]} (or [tools.web_search] api_key)"
    return None


def check_config(config: Config) -> str | None:
    try:
        return missing(load_settings(config))
    except SearchError as exc:
        return str(exc)


def snippet(text: str | None, limit: int = SNIPPET_CHARS) -> str:
    flat = re.sub(r"\s+", " ", text or "").strip()
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(" ,;:.") + "…"


def render(query: str, hits: list[WebResult]) -> str:
    if not hits:
        return f"No results for {query!r}."
    blocks = []
    for number, hit in enumerate(hits, 1):
        lines = [f"{number}. {hit.title or hit.url}", f"   {hit.url}"]
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


# -- providers ----------------------------------------------------------------------------


async def search_tavily(
    query: str, count: int, key: str, settings: SearchSettings
) -> list[WebResult]:
    import tavily  # imported on use: it pulls in `requests` (slow), most turns never search
    import tavily.errors

    client = tavily.AsyncTavilyClient(
        api_key=key, api_base_url=settings.base_url or DEFAULT_BASE["tavily"]
    )
    try:
        answer: dict[str, Any] = await client.search(
            query, max_results=count, timeout=settings.timeout_seconds
        )
    except tavily.errors.InvalidAPIKeyError:
        raise SearchError("Tavily refused the API key (401); check TAVILY_API_KEY") from None
    except tavily.errors.UsageLimitExceededError:
        raise SearchError("Tavily usage limit reached (429); try again later") from None
    except (tavily.errors.ForbiddenError, tavily.errors.BadRequestError) as exc:
        raise SearchError(f"Tavily refused the search: {exc or type(exc).__name__}") from None
    except tavily.errors.TimeoutError:
        raise SearchError(f"Tavily did not answer within {settings.timeout_seconds:g} s") from None
    finally:
        await client.close()
    return [_hit(result, result.get("content")) for result in answer.get("results", [])]


async def search_exa(query: str, count: int, key: str, settings: SearchSettings) -> list[WebResult]:
    base = (settings.base_url or DEFAULT_BASE["exa"]).rstrip("/")
    payload = {
        "query": query,
        "type": "auto",
        "numResults": count,
        "contents": {"highlights": {"numSentences": 3, "highlightsPerUrl": 1}},
    }
    async with httpx.AsyncClient(timeout=settings.timeout_seconds) as client:
        response = await client.post(f"{base}/search", json=payload, headers={"x-api-key": key})
    _raise_for(response, "Exa", "EXA_API_KEY")
    hits = []
    for result in response.json().get("results", []):
        highlights = result.get("highlights") or []
        text = " ".join(highlights) or result.get("summary") or result.get("text")
        hits.append(
            WebResult(str(result.get("title") or ""), str(result.get("url") or ""), snippet(text))
        )
    return hits


async def search_searxng(query: str, settings: SearchSettings) -> list[WebResult]:
    base = (settings.base_url or "").rstrip("/")
    key = api_key(settings)
    # SearXNG has no keys of its own; an instance behind an auth proxy gets a bearer token.
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(timeout=settings.timeout_seconds) as client:
        response = await client.get(
            f"{base}/search", params={"q": query, "format": "json"}, headers=headers
        )
    if response.status_code == 403:
        raise SearchError(
            "SearXNG refused JSON output (403); add `json` to search.formats in its settings.yml"
        )
    _raise_for(response, "SearXNG", "[tools.web_search] api_key")
    # SearXNG pages and has no limit: `search` keeps the first `count`.
    return [_hit(result, result.get("content")) for result in response.json().get("results", [])]


def _hit(result: dict[str, Any], text: str | None) -> WebResult:
    return WebResult(str(result.get("title") or ""), str(result.get("url") or ""), snippet(text))


def _raise_for(response: httpx.Response, provider: str, key_name: str) -> None:
    if response.status_code == 401:
        raise SearchError(f"{provider} refused the API key (401); check {key_name}")
    if response.status_code == 429:
        raise SearchError(f"{provider} rate limit reached (429); try again later")
    if response.status_code >= 400:
        raise SearchError(f"{provider} answered HTTP {response.status_code}; try again later")


async def search(
    query: str, max_results: int | None, settings: SearchSettings
) -> list[WebResult] | str:
    """The hits, or an error text for the model."""
    problem = missing(settings)
    if problem:
        return f"web_search is not configured: {problem}"
    count = max_results or settings.max_results
    provider = settings.provider
    try:
        if provider == "searxng":
            hits = await search_searxng(query, settings)
        else:
            key = api_key(settings) or ""
            run = search_tavily if provider == "tavily" else search_exa
            hits = await run(query, count, key, settings)
    except SearchError as exc:
        return str(exc)
    except httpx.TimeoutException:
        return f"{provider} did not answer within {settings.timeout_seconds:g} s"
    except httpx.HTTPStatusError as exc:  # tavily-python raises this for 5xx
        return f"{provider} answered HTTP {exc.response.status_code}; try again later"
    except httpx.HTTPError as exc:
        return f"cannot reach {provider} ({type(exc).__name__}: {exc})"
    except ValueError as exc:  # a body that is not the JSON promised
        return f"{provider} sent an unreadable answer ({exc})"
    return hits[:count]


@tool(
    "web_search",
    egress=Egress.READ_ONLY,
    untrusted=True,
    offers="listing",
    background=True,
    check=check_config,
    target=lambda p: f"web_search:query={p.query}",
    timeout=130.0,  # the call keeps its own deadline, timeout_seconds (<= 120)
)
async def web_search(
    ctx: RunContext,
    query: Annotated[str, Field(min_length=1)],
    max_results: Annotated[int | None, Field(ge=1, le=20, description="default 5")] = None,
) -> ToolResult:
    """Search the web: numbered results with title, URL and snippet."""
    try:
        settings = load_settings(ctx.config)
    except SearchError as exc:
        return ToolResult.error(str(exc))
    found = await search(query, max_results, settings)
    if isinstance(found, str):
        return ToolResult.error(found)
    return ToolResult.ok(render(query, found))
