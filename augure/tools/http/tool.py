"""The `http` tool: its arguments, what a GET sends out, and the declaration that makes the
executor ask before anything but a GET."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, cast

from pydantic import BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from augure.config.guests import PRESETS
from augure.tools.base import Egress, RunContext, ToolResult, tool
from augure.tools.http.settings import RequestError, check_config, load_settings
from augure.tools.http.targets import aliases, rule, target

Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]


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
    # Loaded at the first call: most turns send no request (docs/performance.md).
    from augure.tools.http.request import request

    return await request(
        method, url, settings=settings, preset=preset, headers=headers, body=body, raw=raw
    )


# pydantic accepts decorated validators here; its stubs only know plain callables.
_checked = cast(Callable[..., Any], model_validator(mode="after")(_only_what_the_method_says))
http_tool.validated_by("_checked", _checked)
