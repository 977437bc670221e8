"""The browser's SSRF guard: a loopback forward proxy that every Chromium request goes through.

Playwright's request routing does not see redirect hops, WebSockets or every worker, so a
page could still reach 169.254.169.254 through a 302. A proxy sits under all of them: it
checks each destination when the connection is made and dials the very addresses it checked,
which also defeats DNS rebinding between the check and the connection. Behind a proxy the
environment names, it goes out through that proxy (augure.tools.browser.upstream).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from augure.common.errors import Unavailable
from augure.tools.browser.upstream import proxy_for
from augure.tools.netguard import BlockedURL, IPAddress, classify, resolve

log = logging.getLogger(__name__)

# Why a destination is refused (BlockedURL), or the addresses to dial.
HostCheck = Callable[[str, int], Awaitable[list[IPAddress]]]


# An OSError too: the proxy answers any OSError on the way out with a 502 to the browser.
class Unreachable(Unavailable, OSError):
    """The destination does not exist (no DNS answer); not a policy refusal."""


HEAD_LIMIT = 64 * 1024
HEAD_TIMEOUT = 30.0
CONNECT_TIMEOUT = 10.0
# Hop-by-hop headers of the browser-to-proxy leg; the upstream leg is one request, then close.
BLOCKED_HEADER = "X-Augure-Blocked"
_HOP_HEADERS = {"proxy-connection", "connection", "keep-alive", "proxy-authorization"}


async def public_only(host: str, port: int) -> list[IPAddress]:
    """The default check: every address the host resolves to must be public."""
    try:
        addresses = await resolve(host, port)
    except BlockedURL as exc:
        # Not a refusal: the name does not resolve, so there is nothing to reach anyway.
        raise Unreachable(str(exc)) from None
    for address in addresses:
        reason = classify(address)
        if reason:
            raise BlockedURL(
                f"{host} resolves to {address}, which is {reason}; the browser may not reach "
                "private networks (tools.http.allow_private_networks)"
            )
    return addresses


class GuardProxy:
    def __init__(self, check: HostCheck = public_only) -> None:
        self.check = check
        # Recently refused destinations, so a failed navigation can say why.
        self.blocked: deque[str] = deque(maxlen=50)
        self.refusals = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
            if len(head) > HEAD_LIMIT:
                raise ValueError("request head too large")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method, target, version = request_line.split(" ", 2)
            plain = None if method.upper() == "CONNECT" else _plain_request(target, header_lines)
            host, port = _host_port(target, 443) if plain is None else plain.host_port
            try:
                addresses = await self.check(host, port)
            except BlockedURL as exc:
                self.blocked.append(f"{host}:{port}: {exc}")
                self.refusals += 1
                log.info("browser request refused: %s:%s (%s)", host, port, exc)
                await _respond(writer, "403 Forbidden", f"Blocked by Augure: {exc}", blocked=True)
                return
            up_reader, upstream = await _open_upstream(plain, host, port, addresses)
            if plain is None:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                upstream.write(plain.head(method, version))
            await asyncio.gather(_pipe(reader, upstream), _pipe(up_reader, writer))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass
        except (ValueError, OSError) as exc:
            with contextlib.suppress(Exception):
                await _respond(writer, "502 Bad Gateway", str(exc))
        finally:
            for stream in (upstream, writer):
                if stream is not None:
                    stream.close()


def _host_port(authority: str, default: int) -> tuple[str, int]:
    host, _, port = authority.rpartition(":")
    if not host or not port.isdigit():
        return authority.strip("[]"), default
    return host.strip("[]"), int(port)


@dataclass
class _PlainRequest:
    """An absolute-form http:// request from the browser, to be sent on for one exchange."""

    url: str
    host_port: tuple[str, int]
    path: str
    headers: list[str]
    # Sent to an HTTP proxy: in absolute form, with the proxy's credentials if it has any.
    proxied: bool = False
    authorization: str = ""

    def head(self, method: str, version: str) -> bytes:
        target = self.url if self.proxied else self.path
        extra = [self.authorization] if self.authorization else []
        # One request per upstream connection: a reused browser connection could otherwise
        # carry a second request, for another host, to the address checked for the first.
        lines = [f"{method} {target} {version}", *self.headers, *extra, "Connection: close"]
        return "\r\n".join([*lines, "", ""]).encode("latin-1")


def _plain_request(target: str, header_lines: list[str]) -> _PlainRequest:
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"unsupported proxy request target {target[:100]!r}")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = [
        line
        for line in header_lines
        if line and line.split(":", 1)[0].strip().lower() not in _HOP_HEADERS
    ]
    return _PlainRequest(target, (parts.hostname, parts.port or 80), path, headers)


async def _open_upstream(
    plain: _PlainRequest | None, host: str, port: int, addresses: list[IPAddress]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Straight to the checked addresses, or through the environment's proxy for the URL."""
    route = proxy_for("https" if plain is None else "http", host)
    if route is None:
        return await _dial(addresses, port)
    if plain is not None and route.speaks_http:
        # A plain request goes to an HTTP proxy as it is: many refuse CONNECT to port 80.
        plain.proxied, plain.authorization = True, route.authorization()
        return await route.open()
    return await route.tunnel(host, port, addresses)


async def _dial(
    addresses: list[IPAddress], port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    error: OSError = OSError("no address to connect to")
    for address in addresses:
        try:
            return await asyncio.wait_for(
                asyncio.open_connection(str(address), port), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError) as exc:
            error = OSError(f"cannot connect to {address}:{port} ({exc})")
    raise error


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        # Ending one direction ends the exchange: the other pipe then sees its stream close.
        writer.close()


async def _respond(
    writer: asyncio.StreamWriter, status: str, text: str, *, blocked: bool = False
) -> None:
    body = text.encode()
    # The header lets the tool tell a refused navigation from a site's own 403.
    mark = f"{BLOCKED_HEADER}: 1\r\n" if blocked else ""
    writer.write(
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n{mark}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()
