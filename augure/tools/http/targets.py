"""The canonical target of an `http` call, what the owner's rules match (`http:GET:host/path`),
its other spellings for deny rules, and the narrow rule "Always allow" saves; and where a URL
under a preset goes."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from augure.approval import canonical
from augure.approval.rules import literal
from augure.tools.http.settings import Preset, RequestError, load_settings

if TYPE_CHECKING:
    from augure.config.settings import Config


def _host(url: httpx.URL) -> str:
    host = url.host.lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{host}:{url.port}" if url.port is not None else host


DEFAULT_PORTS = {"http": 80, "https": 443}


def _canonical_host(scheme: str, host: str, port: int | None) -> str:
    name = canonical.host(host)
    return name if port is None or DEFAULT_PORTS.get(scheme) == port else f"{name}:{port}"


def relative(url: httpx.URL) -> bool:
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


def resolve_url(url: str, preset: Preset) -> str:
    """A relative URL joined under the preset's base; an absolute one must stay on its host."""
    base = httpx.URL(preset.base_url)
    parsed = httpx.URL(url)
    if relative(parsed):
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
