"""Pooled connections whose idle checks cost one poll, not a table of socket attributes.

Before every request, httpcore asks each idle connection of its pool whether the server has
closed it (its socket would then be readable). Through anyio that question rebuilds the
stream's whole attribute table, a `getpeername()` system call included, so its cost grows
with the pool: with 20 chats answered at once, Telegram's pool and the model's each hold ~20
connections, and those checks cost CPU on every message (`bench.throughput`, performance.md).
A stream opened through `KeptSocket` keeps the socket it was opened on and polls it, as
httpcore itself does once it has the socket.

One wrapper serves both stacks: python-telegram-bot's httpx ▸ httpcore and the openai SDK's
own client (httpx2 ▸ httpcore2 since openai 3, httpx before). `keep_client_sockets` takes a
client as its library built it, so each keeps its own proxy handling: the proxy given, or
`HTTP(S)_PROXY` / `ALL_PROXY` / `NO_PROXY`, whose pools (httpcore's proxy pools) it wraps too.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import ssl
import threading
from typing import Any, TypeVar

import httpx

log = logging.getLogger(__name__)
Transport = TypeVar("Transport")
Client = TypeVar("Client")


_loading = threading.Lock()
_context: ssl.SSLContext | None = None


def tls_context() -> ssl.SSLContext:
    """One context for every client: the CA bundle is read once (it is slow), not per client."""
    global _context
    with _loading:  # the early load may still be reading it: wait for it, not a second read
        if _context is None:
            _context = httpx.create_ssl_context()
        return _context


def load_tls_early() -> None:
    """Start reading the CA bundle on a thread. OpenSSL parses it without holding the GIL, so
    it runs beside the imports that follow instead of after them (time off `augure run`'s
    start). A failure is left for `tls_context()` to raise where it is used."""

    def load() -> None:
        with contextlib.suppress(Exception):
            tls_context()

    threading.Thread(target=load, name="tls", daemon=True).start()


def keep_sockets(transport: Transport) -> Transport:
    """Give `transport`'s pool (an httpx or httpx2 `AsyncHTTPTransport`) streams that keep
    their socket. The pool's backend is not public API: a version without it keeps its own
    backend (the old cost, nothing broken)."""
    pool: Any = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        log.debug("%s has no network backend to wrap", type(transport).__name__)
    elif not isinstance(backend, KeptSocket):
        pool._network_backend = KeptSocket(backend)
    return transport


def keep_client_sockets(client: Client) -> Client:
    """Give every pool of `client` (an httpx or httpx2 `AsyncClient`) streams that keep their
    socket: its default transport and those mounted for proxies. A transport given to the
    client instead would turn its proxy variables off, hence wrapping after it is built."""
    pools = [getattr(client, "_transport", None), *getattr(client, "_mounts", {}).values()]
    for mounted in pools:
        if mounted is not None:  # a NO_PROXY pattern mounts None: the default transport
            keep_sockets(mounted)
    return client


class KeptSocket:
    """A network backend whose streams answer "is_readable" from the socket kept at connect."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> _Stream:
        return _Stream(await self._backend.connect_tcp(*args, **kwargs))

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> _Stream:
        return _Stream(await self._backend.connect_unix_socket(*args, **kwargs))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class _Stream:
    def __init__(self, stream: Any) -> None:
        self._stream = stream
        # TLS is layered over the same socket, so this is the one to poll either way.
        self._socket: socket.socket | None = stream.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = await self._stream.read(max_bytes, timeout)
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> _Stream:
        return _Stream(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._socket is not None:
            return readable(self._socket)
        return self._stream.get_extra_info(info)


def readable(sock: socket.socket) -> bool:
    """True when a read would not block: data, or the end a closed connection shows. A
    socket already closed counts as readable, so its connection is dropped, not reused."""
    descriptor = sock.fileno()
    if descriptor < 0:
        return True
    if not hasattr(select, "poll"):  # Windows
        ready, _, _ = select.select([descriptor], [], [], 0)
        return bool(ready)
    poller = select.poll()
    poller.register(descriptor, select.POLLIN)
    return bool(poller.poll(0))
