"""One request: the preset's URL and headers (secrets substituted, bound to their origin),
every hop through the SSRF guard (redirects followed here, never by httpx, and only for GET),
the body read up to its cap, and what comes back scrubbed of the secrets sent."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import httpx

from augure.tools.http.render import Response, render
from augure.tools.http.settings import HttpSettings, RequestError
from augure.tools.http.targets import relative, resolve_url
from augure.tools.netguard import BlockedURL, Pinned, pin_url
from augure.tools.result import ToolResult

# Checks a hop; a `Pinned` result also says which checked address to connect to.
Guard = Callable[[str], Awaitable[str | Pinned]]

MAX_REDIRECTS = 5
SHOWN_HEADERS = ("content-type", "location", "retry-after")
HANDLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Credentials the model may have set itself; dropped with the preset's when a hop leaves
# the origin they were meant for, as a browser would.
CREDENTIAL_HEADERS = {"authorization", "cookie", "proxy-authorization"}


@dataclass
class Prepared:
    url: str
    headers: dict[str, str]
    # Substituted secret values by their variable name, to scrub from whatever comes back.
    secrets: dict[str, str] = field(default_factory=dict)
    # Headers that belong to the first origin only (the preset's, and credentials).
    origin_bound: set[str] = field(default_factory=set)


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
        if relative(httpx.URL(url)):
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
