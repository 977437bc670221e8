"""`http`: one request to an outside API, with owner-defined presets for base URLs and secrets.

Every hop of a request passes the SSRF guard (redirects are followed here, never by httpx),
secret preset headers go only to the preset's own origin, and only GET follows redirects, so
an approved write can never be moved to another URL by the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast
from urllib.parse import urljoin, urlsplit

import httpx
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from augure.approval import canonical
from augure.approval.rules import literal
from augure.common.errors import NotDone
from augure.config.guests import PRESETS
from augure.config.tools import settings_for
from augure.tools.base import Egress, RunContext, ToolResult, describe, tool
from augure.tools.http_render import Response, render
from augure.tools.netguard import BlockedURL, Pinned, pin_url

if TYPE_CHECKING:
    from augure.config.settings import Config

Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
# Checks a hop; a `Pinned` result also says which checked address to connect to.
Guard = Callable[[str], Awaitable[str | Pinned]]

MAX_REDIRECTS = 5
SHOWN_HEADERS = ("content-type", "location", "retry-after")
HANDLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Credentials the model may have set itself; dropped with the preset's when a hop leaves
# the origin they were meant for, as a browser would.
CREDENTIAL_HEADERS = {"authorization", "cookie", "proxy-authorization"}


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str
    headers: dict[str, str] = {}

    @field_validator("base_url")
    @classmethod
    def _absolute(cls, value: str) -> str:
        url = httpx.URL(value)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"must be an absolute http(s) URL, not {value!r}")
        return value


@settings_for("http")
class HttpSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_seconds: float = Field(default=30.0, gt=0, le=300)
    max_response_bytes: int = Field(default=200_000, gt=0)
    allow_private_networks: bool = False
    presets: dict[str, Preset] = {}


class RequestError(NotDone):
    """A request that cannot be made; the message is fit for the model."""


def load_settings(config: Config) -> HttpSettings:
    """The `[tools.http]` table, validated; RequestError naming the key when it is wrong."""
    try:
        return HttpSettings.model_validate(config.tools.section("http"))
    except ValidationError as exc:
        raise RequestError(f"fix [tools.http]: {describe(exc)}") from None


def check_config(config: Config) -> str | None:
    try:
        load_settings(config)
    except RequestError as exc:
        return str(exc)
    return None


# -- canonical targets ------------------------------------------------------------------


def _host(url: httpx.URL) -> str:
    host = url.host.lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{host}:{url.port}" if url.port is not None else host


DEFAULT_PORTS = {"http": 80, "https": 443}


def _canonical_host(scheme: str, host: str, port: int | None) -> str:
    name = canonical.host(host)
    return name if port is None or DEFAULT_PORTS.get(scheme) == port else f"{name}:{port}"


def _relative(url: httpx.URL) -> bool:
    # `file:///x` and `//host/x` are not paths under a preset: they go to the checks instead.
    return not url.scheme and not url.host


def canonical_target(
    method: str, url: str, preset: str | None = None
) -> tuple[str, list[str]] | None:
    """(`http:METHOD:host`, path segments) of a call, or None when the URL cannot be parsed.

    The path is the one the server would serve: `.`, `..`, `//`, trailing dots and
    percent-encoding resolved from the raw text, so `/a/../denied` is `/denied`. A relative
    URL is named by its preset: whoever writes the rule knows which host that is.
    """
    try:  # parsed here, not by httpx: it refuses some spellings a server or browser accepts
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme and not parts.netloc:
        if preset is None:
            return None
        where = f"preset={preset}"
    else:
        where = _canonical_host(parts.scheme.lower(), parts.hostname or "", port)
    segments = canonical.path(parts.path).split("/")[1:]
    return f"http:{method.upper()}:{where}", segments


def target(arguments: Any, config: Config | None = None) -> str | None:
    """`http:METHOD:host/path` (canonical host and path, no query)."""
    url = arguments.url
    if config is not None and arguments.preset is not None:
        with contextlib.suppress(RequestError, KeyError, httpx.InvalidURL):
            url = resolve_url(arguments.url, load_settings(config).presets[arguments.preset])
    found = canonical_target(arguments.method, url, arguments.preset)
    return None if found is None else found[0] + "/" + "/".join(found[1])


def aliases(arguments: Any, config: Config) -> list[str]:
    """The other spelling of a preset call, for deny rules: the preset's host and full path
    for a relative URL, `preset=NAME/...` for an absolute URL on the preset's host."""
    if arguments.preset is None:
        return []
    try:
        preset = load_settings(config).presets[arguments.preset]
        resolved = resolve_url(arguments.url, preset)
    except (RequestError, KeyError, httpx.InvalidURL):
        return []
    spellings = [t for t in (target(arguments, config),) if t is not None]
    base = canonical.path(urlsplit(preset.base_url).path).rstrip("/")
    full = canonical.path(urlsplit(resolved).path)
    if full == base or full.startswith(base + "/"):
        inside = full[len(base) :] or "/"
        spellings.append(f"http:{arguments.method.upper()}:preset={arguments.preset}{inside}")
    return spellings


def rule(arguments: Any, config: Config | None = None) -> str | None:
    """Always-allow covers the first path segment (`host/v1/*`), never a whole host."""
    found = target(arguments, config)
    if found is None:
        return None
    head, _, path = found.partition("/")
    segments = path.split("/")
    if len(segments) <= 1 or segments[1:] == [""]:
        return literal(found)  # `/` or `/items`: exactly this path
    return f"{literal(head)}/{literal(segments[0])}/*"


# -- preparing a request ------------------------------------------------------------------


@dataclass
class Prepared:
    url: str
    headers: dict[str, str]
    # Substituted secret values by their variable name, to scrub from whatever comes back.
    secrets: dict[str, str] = field(default_factory=dict)
    # Headers that belong to the first origin only (the preset's, and credentials).
    origin_bound: set[str] = field(default_factory=set)


def resolve_url(url: str, preset: Preset) -> str:
    """A relative URL joined under the preset's base; an absolute one must stay on its host."""
    base = httpx.URL(preset.base_url)
    parsed = httpx.URL(url)
    if _relative(parsed):
        # Concatenated, not urljoin'ed: `/repos` under `https://h/api/v3` means /api/v3/repos.
        joined = preset.base_url.rstrip("/") + "/" + url.lstrip("/")
        if httpx.URL(joined).host != base.host:
            raise RequestError(f"URL {url!r} leaves the preset's host")
        return joined
    if (parsed.scheme, _host(parsed)) != (base.scheme, _host(base)):
        raise RequestError(
            f"{url} is not on the preset's host ({base.scheme}://{_host(base)}); "
            "use a relative path or no preset"
        )
    return url


def substitute(value: str, environ: Mapping[str, str], where: str) -> tuple[str, dict[str, str]]:
    used: dict[str, str] = {}

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if not environ.get(name):
            raise RequestError(f"environment variable {name} is not set (needed by {where})")
        used[name] = environ[name]
        return environ[name]

    return HANDLE.sub(replace, value), used


def prepare(
    url: str,
    preset_name: str | None,
    headers: Mapping[str, str] | None,
    settings: HttpSettings,
    environ: Mapping[str, str] | None = None,
) -> Prepared:
    env = os.environ if environ is None else environ
    # The model's own headers are sent literally: `${VAR}` in them must not read the env.
    merged = {name.lower(): value for name, value in (headers or {}).items()}
    bound = {name for name in merged if name in CREDENTIAL_HEADERS}
    secrets: dict[str, str] = {}
    if preset_name is None:
        if _relative(httpx.URL(url)):
            raise RequestError(
                f"url {url!r} must be absolute (http:// or https://) without a preset"
            )
        return Prepared(url, merged, secrets, bound)
    preset = settings.presets.get(preset_name)
    if preset is None:
        known = ", ".join(sorted(settings.presets)) or "none configured"
        raise RequestError(f"unknown preset {preset_name!r}; presets: {known}")
    resolved = resolve_url(url, preset)
    for name, value in preset.headers.items():
        # The preset wins: the model cannot swap the owner's credentials for its own.
        merged[name.lower()], used = substitute(value, env, f"preset {preset_name} header {name}")
        bound.add(name.lower())
        secrets.update(used)
        if not used:  # written literally: a secret all the same (docs/reference/secrets.md#secrets)
            secrets[preset_secret_name(preset_name, name)] = value
    return Prepared(resolved, merged, secrets, bound)


def preset_secret_name(preset: str, header: str) -> str:
    """The name a literal preset header value is redacted as (the same in host/secrets.py)."""
    return f"TOOLS_HTTP_PRESETS_{preset}_HEADERS_{header}".upper().replace("-", "_")


def _dot_segments(url: httpx.URL) -> bool:
    # httpx resolves literal `..` but not `%2e%2e`, which a server may still honour; either
    # would make the path a rule matched differ from the one reached.
    return any(segment in (".", "..") for segment in url.path.split("/"))


# -- sending ------------------------------------------------------------------------------


async def send(
    client: httpx.AsyncClient,
    method: str,
    prepared: Prepared,
    body: str | dict[str, Any] | list[Any] | None,
    guard: Guard,
    max_bytes: int,
) -> Response:
    """Make the request, following GET redirects ourselves so `guard` sees every hop."""
    url, headers, hops = prepared.url, dict(prepared.headers), [prepared.url]
    origin = httpx.URL(url).copy_with(path="/", query=None, fragment=None)
    content = body.encode() if isinstance(body, str) else None
    payload = body if isinstance(body, dict | list) else None
    for _ in range(MAX_REDIRECTS + 1):
        try:
            checked = await guard(url)
        except BlockedURL as exc:
            raise RequestError(f"refused {url}: {exc}") from None
        if _dot_segments(httpx.URL(url)):
            raise RequestError(f"refused {url}: '.' or '..' path segments are not allowed")
        target, sent_headers, extensions = _pin(url, checked, headers)
        request = client.build_request(
            method, target, headers=sent_headers, content=content, json=payload,
            extensions=extensions,
        )  # fmt: skip
        response = await client.send(request, stream=True)
        try:
            location = response.headers.get("location")
            if method == "GET" and response.is_redirect and location:
                url = urljoin(url, location)  # the name, not the pinned address
                hops.append(url)
                next_origin = httpx.URL(url).copy_with(path="/", query=None, fragment=None)
                if next_origin != origin:
                    headers = {k: v for k, v in headers.items() if k not in prepared.origin_bound}
                continue
            data, cut = await _read_capped(response, max_bytes)
        finally:
            await response.aclose()
        return Response(
            response.status_code,
            response.reason_phrase,
            {k: response.headers[k] for k in SHOWN_HEADERS if k in response.headers},
            data,
            cut,
            hops,
        )
    raise RequestError(f"more than {MAX_REDIRECTS} redirects: {' -> '.join(hops[:4])} ...")


def _pin(
    url: str, checked: str | Pinned, headers: dict[str, str]
) -> tuple[httpx.URL, dict[str, str], dict[str, Any]]:
    """Connect to the address the guard checked, still speaking to the name: the Host header
    and, for https, the TLS server name (so the certificate is verified against the name)."""
    logical = httpx.URL(url)
    if not isinstance(checked, Pinned) or checked.address is None:
        return logical, headers, {}
    extensions: dict[str, Any] = {}
    if logical.scheme == "https":
        extensions["sni_hostname"] = logical.host
    host = {"Host": logical.netloc.decode("ascii")}
    return logical.copy_with(host=checked.address), {**headers, **host}, extensions


async def _read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most `limit` decoded bytes: a huge or endless (or gzip-bombed) body stops there."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _scrub(text: str, secrets: Mapping[str, str]) -> str:
    # The executor redacts too; this keeps the tool safe when called on its own.
    for name, value in sorted(secrets.items(), key=lambda item: -len(item[1])):
        text = text.replace(value, f"[REDACTED:{name}]")
    return text


async def request(
    method: str,
    url: str,
    *,
    settings: HttpSettings,
    preset: str | None = None,
    headers: Mapping[str, str] | None = None,
    body: str | dict[str, Any] | list[Any] | None = None,
    guard: Guard | None = None,
    environ: Mapping[str, str] | None = None,
    raw: bool = False,
) -> ToolResult:
    """The whole call, errors returned as results. `guard` defaults to the SSRF check."""

    async def ssrf(hop: str) -> Pinned:
        return await pin_url(hop, allow_private=settings.allow_private_networks)

    secrets: dict[str, str] = {}
    timeout = settings.timeout_seconds
    deadline = asyncio.get_running_loop().time() + timeout
    try:
        prepared = prepare(url, preset, headers, settings, environ)
        secrets = prepared.secrets
        async with (
            httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client,
            asyncio.timeout(timeout),
        ):
            response = await send(
                client, method, prepared, body, guard or ssrf, settings.max_response_bytes
            )
    except RequestError as exc:
        return ToolResult.error(_scrub(str(exc), secrets))
    except (TimeoutError, httpx.TimeoutException):
        return ToolResult.error(f"no complete response from {url} within {timeout:g} s")
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        return ToolResult.error(_scrub(f"{method} {url} failed: {exc}", secrets))
    # The page is read within what is left of the timeout: no parse outlives the call.
    left = deadline - asyncio.get_running_loop().time()
    shown = await render(response, method, settings.max_response_bytes, left, raw)
    output = _scrub(shown.text, secrets)
    ok = response.status < 400 and shown.read
    return ToolResult.ok(output) if ok else ToolResult.error(output)


def _leaves(p: Any) -> list[str]:
    """What a GET sends to the place its URL names: the URL, and each header the model set,
    name and value (a `Cookie`, an `X-Data` carries as much as a query). A preset's API is
    the owner's choice of place, its headers the owner's: nothing there leaves unchosen."""
    if p.method != "GET" or p.preset is not None:
        return []
    return [p.url, *(f"{name}: {value}" for name, value in (p.headers or {}).items())]


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


# Headers that make a server treat a request as another method: a GET (run unasked) or an
# approved POST must not turn into a DELETE on the way.
METHOD_OVERRIDE_HEADERS = frozenset(
    {"x-http-method-override", "x-http-method", "x-method-override"}
)


def _only_what_the_method_says(p: Any) -> Any:
    overriding = sorted(
        h for h in (p.headers or {}) if h.strip().lower() in METHOD_OVERRIDE_HEADERS
    )
    if overriding:
        raise PydanticCustomError(
            "http_arguments",
            "method-override headers ({names}) are refused: use the method itself",
            {"names": ", ".join(overriding)},
        )
    if p.method == "GET" and p.body is not None:
        raise PydanticCustomError("http_arguments", "a GET request carries no body")
    return p


@tool(
    "http",
    egress=Egress.WRITE,
    classify=lambda p, _config: Egress.READ_ONLY if p.method == "GET" else Egress.WRITE,
    target=target,
    rule=rule,
    aliases=aliases,
    untrusted=True,
    leaves=lambda p: _leaves(p),
    background=True,
    check=check_config,
    timeout=330.0,  # the call keeps its own deadline, [tools.http] timeout_seconds (<= 300)
)
async def http_tool(
    ctx: RunContext,
    method: Annotated[Method, BeforeValidator(_upper)],
    url: Annotated[str, Field(description="http(s) URL, or a path under the preset's base")],
    preset: Annotated[str | None, Field(description="an API set up with its credentials")] = None,
    headers: dict[str, str] | None = None,
    body: Annotated[
        str | dict[str, Any] | list[Any] | None, Field(description="text, or JSON")
    ] = None,
    raw: Annotated[bool, Field(description="HTML as markup, not readable text")] = False,
) -> ToolResult:
    """An HTTP request to an API or page: status, main headers, body. Only GET runs
    unasked."""
    guest = ctx.config.guest_chat(ctx.chat_id)  # docs/security.md, "Guests"
    if preset is not None and guest and not ctx.config.guests.offers(PRESETS):
        return ToolResult.error("a preset is not offered in a guest's chat: it is the owner's")
    try:
        settings = load_settings(ctx.config)
    except RequestError as exc:
        return ToolResult.error(str(exc))
    return await request(
        method, url, settings=settings, preset=preset, headers=headers, body=body, raw=raw
    )


# pydantic accepts decorated validators here; its stubs only know plain callables.
_checked = cast(Callable[..., Any], model_validator(mode="after")(_only_what_the_method_says))
http_tool.validated_by("_checked", _checked)
