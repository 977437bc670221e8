"""Pooled connections that keep their socket (augure.common.keepalive) still notice a server that
closed them while idle and still reuse one that is open, over plain TCP and TLS, in both
HTTP stacks the bot uses (httpx for Telegram, the openai SDK's own for the model)."""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from augure.common import keepalive
from augure.common.keepalive import KeptSocket, keep_sockets
from augure.config.settings import load_config
from augure.llm.client import LLM
from tests.unit.test_skill_hub import self_signed

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


class Server:
    """Answers each request with keep-alive headers; with `hang_up`, closes the connection
    after the first answer, so the client's pooled connection is idle and already closed
    when the next request would reuse it."""

    def __init__(self, tls: ssl.SSLContext | None = None, hang_up: bool = False) -> None:
        self.tls = tls
        self.hang_up = hang_up
        self.connections = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        port = self._server.sockets[0].getsockname()[1]
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{port}/"

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(ANSWER)
                await writer.drain()
                if self.hang_up:
                    break
        except asyncio.IncompleteReadError:
            pass  # the client closed the connection
        writer.close()


def httpx_client(verify: ssl.SSLContext | bool) -> Any:
    return httpx.AsyncClient(transport=keep_sockets(httpx.AsyncHTTPTransport(verify=verify)))


def openai_sdk_client(verify: ssl.SSLContext | bool) -> Any:
    """The model's HTTP client, as the SDK makes it (httpx2 since openai 3)."""
    from openai import DefaultAsyncHttpxClient

    client = DefaultAsyncHttpxClient(verify=verify)
    keep_sockets(client._transport)
    return client


CLIENTS = [pytest.param(httpx_client, id="httpx"), pytest.param(openai_sdk_client, id="sdk")]


@pytest.fixture
def tls_pair(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    cert_file, key_file = self_signed(tmp_path)
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cafile=str(cert_file))
    return server, client


async def connections_for_two(make: Callable[[Any], Any], server: Server, verify: Any) -> int:
    async with server as url:
        client = make(verify)
        async with client:
            first = await client.get(url)
            await asyncio.sleep(0.2)  # the connection sits idle in the pool
            second = await client.get(url)
    assert (first.text, second.text) == ("ok", "ok")
    return server.connections


@pytest.mark.parametrize("make", CLIENTS)
async def test_a_connection_the_server_closed_is_not_reused(make: Callable[[Any], Any]) -> None:
    assert await connections_for_two(make, Server(hang_up=True), verify=False) == 2


@pytest.mark.parametrize("make", CLIENTS)
async def test_an_open_connection_is_reused(make: Callable[[Any], Any]) -> None:
    assert await connections_for_two(make, Server(), verify=False) == 1


@pytest.mark.parametrize("make", CLIENTS)
async def test_an_open_tls_connection_is_reused(
    make: Callable[[Any], Any], tls_pair: tuple[ssl.SSLContext, ssl.SSLContext]
) -> None:
    """The socket kept is the one under TLS: polled, it shows no data while the server
    has sent nothing."""
    server_side, client_side = tls_pair
    assert await connections_for_two(make, Server(server_side), verify=client_side) == 1


def test_a_transport_without_a_pool_is_left_as_it_is() -> None:
    class Other:
        pass

    other = Other()
    assert keep_sockets(other) is other
    assert vars(other) == {}


@pytest.fixture
async def bot_clients(tmp_path: Path) -> AsyncIterator[list[Any]]:
    from augure.channels.telegram.bot import build_application

    config = load_config(home=tmp_path)
    application = build_application(config, "123:abc")
    llm = LLM(config.llm)
    requests = [application.bot.request, application.bot._request[0]]
    yield [request._client._transport for request in requests] + [llm.client._client._transport]
    await llm.client.close()


def test_the_bots_clients_all_keep_their_sockets(bot_clients: list[Any]) -> None:
    """Telegram's two pools (replies, polls), sharing one SSL context (the CA bundle read
    once), and the model's (the SDK's own client and trust)."""
    assert len(bot_clients) == 3
    for transport in bot_clients:
        assert isinstance(transport._pool._network_backend, KeptSocket)
    telegram = bot_clients[:2]
    assert telegram[0]._pool._ssl_context is telegram[1]._pool._ssl_context


@pytest.fixture
def fresh_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keepalive, "_context", None)


@pytest.mark.usefixtures("fresh_context")
def test_the_context_loaded_early_is_the_one_every_client_gets(tmp_path: Path) -> None:
    from augure.channels.telegram.bot import build_application

    keepalive.load_tls_early()
    context = keepalive.tls_context()
    assert keepalive.tls_context() is context
    application = build_application(load_config(home=tmp_path), "123:abc")
    assert application.bot.request._client._transport._pool._ssl_context is context


@pytest.mark.usefixtures("fresh_context")
def test_a_bad_ca_file_is_reported_where_the_context_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    uncaught: list[object] = []
    monkeypatch.setattr(threading, "excepthook", uncaught.append)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    keepalive.load_tls_early()
    with pytest.raises(FileNotFoundError):
        keepalive.tls_context()
    for thread in threading.enumerate():
        if thread.name == "tls":
            thread.join(5)
    assert uncaught == []  # no traceback from the loading thread
