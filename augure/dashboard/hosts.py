"""The dashboard answers to its own address only (docs/security.md).

- Host: a page on a name its owner makes resolve to 127.0.0.1 (DNS rebinding) is, to the
  browser, same-origin with that name, and could read and drive the dashboard if it answered.
  Every request must name the bound address (or `localhost` for a loopback one); anything else
  gets 421 and no page. A non-loopback bind is reached through the owner's reverse proxy under
  a name the dashboard cannot know: there the proxy's own host check stands in.
- Origin: 127.0.0.1 on another port is the same *site*, so SameSite=Strict still sends the
  cookie with a form posted from there. Every state-changing request must come from a page of
  the dashboard itself (its Origin, or failing that its Referer, names the Host it is sent to).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD"})


def own_hosts(host: str, port: int, loopback: bool) -> frozenset[str] | None:
    """The Host values to accept, lower-case; None accepts any (a non-loopback bind)."""
    if not loopback:
        return None
    shown = f"[{host}]" if ":" in host else host
    return frozenset({f"{shown}:{port}".lower(), f"localhost:{port}"})


def same_host(url: str | None, host: str) -> bool:
    """Whether `url` (an Origin or a Referer) is on `host` (the Host header, host:port)."""
    if not url or url == "null":
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


@dataclass
class OwnAddressOnly:
    """ASGI middleware: 421 for a foreign Host, 403 for a state-changing request from a page
    that is not the dashboard's."""

    app: ASGIApp
    hosts: frozenset[str] | None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not host or (self.hosts is not None and host.lower() not in self.hosts):
            refusal = PlainTextResponse("This dashboard answers to its own address only.", 421)
            await refusal(scope, receive, send)
            return
        if scope["method"] not in SAFE_METHODS:
            sent_from = headers.get("origin") or headers.get("referer")
            if not same_host(sent_from, host):
                refusal = PlainTextResponse("Refused: not sent from the dashboard's own page.", 403)
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)
