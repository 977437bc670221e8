"""Outbound traffic through a proxy, where Telegram is blocked: the `[telegram] proxy` setting
(http or socks5) and the usual `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY` / `NO_PROXY`
variables. Real local proxies on loopback record every request they carry; the bot answers a
message end to end through them."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ipaddress
import logging
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Self

import pytest
from aiohttp import web
from telegram.error import NetworkError

from augure.channels.telegram.bot import build_application
from augure.cli import doctor
from augure.common.keepalive import KeptSocket
from augure.config.settings import ConfigError, load_config
from augure.llm.client import LLM
from augure.tools.browser.proxy import GuardProxy, HostCheck, public_only
from augure.tools.browser.session import BrowserPool
from augure.tools.browser.settings import BrowserSettings, find_executable
from augure.tools.netguard import IPAddress
from tests.e2e.conftest import OWNER, Bot
from tests.fakes.openai import FakeOpenAI, text
from tests.fakes.telegram import FakeTelegram
from tests.security.test_vulnerability_mcp import manager_for, server_table, start_http_server

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()


async def _splice(
    client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    closing: bool = False,
) -> None:
    """Both ways until the upstream side has answered and hung up. With `closing`, the
    answer's head is told `Connection: close`, so the client never reuses the connection."""
    sending = asyncio.ensure_future(_pipe(client[0], upstream[1]))
    try:
        if closing:
            head = (await upstream[0].readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            kept = [line for line in head if not line.lower().startswith("connection:")]
            client[1].write("\r\n".join([kept[0], "Connection: close", *kept[1:]]).encode())
        await _pipe(upstream[0], client[1])
    finally:
        sending.cancel()
        upstream[1].close()


class LoopbackProxy:
    """A proxy on a loopback port recording what it carries; `scheme` names its kind."""

    scheme = ""

    def __init__(self) -> None:
        self.targets: list[str] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"{self.scheme}://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError


class RecordingProxy(LoopbackProxy):
    """A forward HTTP proxy (one request per connection, `Connection: close` both ways) that
    records each absolute request target and each `Proxy-Authorization` it is sent. CONNECT
    is recorded, and refused unless `tunnels`: the tunnel's target is what shows the route."""

    scheme = "http"

    def __init__(self, *, tunnels: bool = False) -> None:
        super().__init__()
        self.tunnels = tunnels
        self.authorizations: list[str] = []

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except asyncio.IncompleteReadError:
            writer.close()
            return
        method, target, version = head.split("\r\n", 1)[0].split(" ")
        self.authorizations += [
            line.split(":", 1)[1].strip()
            for line in head.split("\r\n")
            if line.lower().startswith("proxy-authorization:")
        ]
        if method == "CONNECT":
            self.targets.append(f"CONNECT {target}")
            if not self.tunnels:
                writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                writer.close()
                return
            host, _, port = target.rpartition(":")
            upstream = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await _splice((reader, writer), upstream)
            writer.close()
            return
        self.targets.append(target)
        address, _, path = target.removeprefix("http://").partition("/")
        host, _, port = address.partition(":")
        upstream = await asyncio.open_connection(host, int(port or 80))
        headers = [
            line
            for line in head.split("\r\n")[1:]
            if line and line.split(":")[0].lower() not in {"connection", "proxy-connection"}
        ]
        request = [f"{method} /{path} {version}", *headers, "Connection: close", "", ""]
        upstream[1].write("\r\n".join(request).encode("latin-1"))
        await _splice((reader, writer), upstream, closing=True)
        writer.close()


class RecordingSocks(LoopbackProxy):
    """A SOCKS5 proxy (no authentication, CONNECT only) recording each destination."""

    scheme = "socks5"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _, methods = await reader.readexactly(2)
        await reader.readexactly(methods)
        writer.write(b"\x05\x00")
        *_, kind = await reader.readexactly(4)  # version, CONNECT, reserved, address kind
        if kind == 1:
            host = ".".join(str(part) for part in await reader.readexactly(4))
        elif kind == 3:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        else:
            writer.close()
            return
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        self.targets.append(f"{host}:{port}")
        upstream = await asyncio.open_connection(host, port)
        writer.write(b"\x05\x00\x00\x01" + bytes(4) + bytes(2))
        await _splice((reader, writer), upstream)
        writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[RecordingProxy]:
    async with RecordingProxy() as running:
        yield running


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy variable of the machine running the tests leaks into the bot."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


@contextlib.asynccontextmanager
async def running_bot(
    home: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
) -> AsyncIterator[Bot]:
    bot = Bot(home, telegram, llm, monkeypatch, extra_env=env)
    await bot.start()
    try:
        yield bot
    finally:
        await bot.stop()


async def answered(bot: Bot) -> str:
    bot.llm.script(text("Through the proxy."))
    bot.telegram.inject_message(OWNER, "hi")
    await bot.telegram.wait_for("sendMessage", timeout=15)
    (message,) = bot.telegram.messages(OWNER)
    return str(message["text"])


async def test_telegram_proxy_setting_carries_the_bot_api(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    proxy: RecordingProxy,
    clean_environment: pytest.MonkeyPatch,
) -> None:
    env = {"AUGURE__TELEGRAM__PROXY": proxy.url}
    async with running_bot(tmp_path / "home", telegram, llm, clean_environment, env) as bot:
        assert await answered(bot) == "Through the proxy."
    api = f"{telegram.root}/bot{telegram.token}/"
    methods = {target.removeprefix(api) for target in proxy.targets if target.startswith(api)}
    assert {"getMe", "getUpdates", "sendMessage"} <= methods
    # The setting is the Bot API's: the model is reached as before.
    assert not [target for target in proxy.targets if target.startswith(llm.base_url)]


async def test_socks5_proxy_setting_carries_the_bot_api(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    clean_environment: pytest.MonkeyPatch,
) -> None:
    async with RecordingSocks() as socks:
        env = {"AUGURE__TELEGRAM__PROXY": socks.url}
        async with running_bot(tmp_path / "home", telegram, llm, clean_environment, env) as bot:
            assert await answered(bot) == "Through the proxy."
    assert telegram.root.removeprefix("http://") in socks.targets


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "ALL_PROXY", "http_proxy"])
async def test_proxy_variables_carry_telegram_and_the_model(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    proxy: RecordingProxy,
    clean_environment: pytest.MonkeyPatch,
    variable: str,
) -> None:
    env = {variable: proxy.url}
    async with running_bot(tmp_path / "home", telegram, llm, clean_environment, env) as bot:
        assert await answered(bot) == "Through the proxy."
    api = f"{telegram.root}/bot{telegram.token}/"
    assert f"{api}sendMessage" in proxy.targets
    assert f"{api}getUpdates" in proxy.targets
    assert f"{llm.base_url}/chat/completions" in proxy.targets


async def test_no_proxy_keeps_its_hosts_direct(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    proxy: RecordingProxy,
    clean_environment: pytest.MonkeyPatch,
) -> None:
    env = {"ALL_PROXY": proxy.url, "NO_PROXY": "127.0.0.1"}
    async with running_bot(tmp_path / "home", telegram, llm, clean_environment, env) as bot:
        assert await answered(bot) == "Through the proxy."
    assert proxy.targets == []


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "ALL_PROXY"])
async def test_https_bot_api_is_tunnelled_through_the_variables_proxy(
    tmp_path: Path,
    proxy: RecordingProxy,
    clean_environment: pytest.MonkeyPatch,
    variable: str,
) -> None:
    """The real Bot API is https: its requests are a CONNECT to the proxy, never a lookup of
    the name here (the host below does not resolve)."""
    clean_environment.setenv(variable, proxy.url)
    clean_environment.setenv("AUGURE_TELEGRAM_API_URL", "https://api.telegram.invalid")
    config = load_config(home=tmp_path)
    application = build_application(config, "123456:TEST-TOKEN")
    with pytest.raises(NetworkError):
        await asyncio.wait_for(application.bot.initialize(), timeout=30)
    await application.bot.shutdown()
    assert proxy.targets == ["CONNECT api.telegram.invalid:443"]


async def test_proxied_pools_keep_cheap_idle_checks(
    tmp_path: Path, clean_environment: pytest.MonkeyPatch
) -> None:
    """The proxies' own pools keep their sockets too (augure.common.keepalive): Telegram's through
    the setting, the model's through the variables."""
    clean_environment.setenv("AUGURE__TELEGRAM__PROXY", "http://127.0.0.1:3128")
    clean_environment.setenv("ALL_PROXY", "http://127.0.0.1:3129")
    config = load_config(home=tmp_path)
    application = build_application(config, "123456:TEST-TOKEN")
    llm = LLM(config.llm)
    clients = [request._client for request in application.bot._request]  # type: ignore[attr-defined]
    clients.append(llm.client._client)
    try:
        for client in clients:
            proxied = [t for t in client._mounts.values() if t is not None]
            assert proxied, "no proxy mounted"
            for transport in [client._transport, *proxied]:
                assert isinstance(transport._pool._network_backend, KeptSocket)
    finally:
        await llm.client.close()


@pytest.mark.parametrize(
    "url",
    ["http://proxy.lan:3128", "https://user:secret@proxy.lan", "socks5://127.0.0.1:1080"],
)
def test_proxy_setting_accepts_http_https_and_socks5(
    tmp_path: Path, clean_environment: pytest.MonkeyPatch, url: str
) -> None:
    (tmp_path / "augure.toml").write_text(f'[telegram]\nproxy = "{url}"\n')
    assert load_config(home=tmp_path).telegram.proxy == url


@pytest.mark.parametrize("url", ["ftp://proxy.lan", "proxy.lan:3128", "socks4://proxy.lan"])
def test_proxy_setting_with_another_scheme_is_one_clear_line(
    tmp_path: Path, clean_environment: pytest.MonkeyPatch, url: str
) -> None:
    (tmp_path / "augure.toml").write_text(f'[telegram]\nproxy = "{url}"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert "telegram.proxy" in message
    assert "http://, https:// or socks5://" in message


async def test_doctor_checks_telegram_through_the_proxy_setting(
    tmp_path: Path,
    telegram: FakeTelegram,
    proxy: RecordingProxy,
    clean_environment: pytest.MonkeyPatch,
) -> None:
    """Where the Bot API is reached only through the proxy, doctor must go the same way."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "augure.toml").write_text(
        f'[telegram]\ntoken = "{telegram.token}"\nproxy = "{proxy.url}"\n'
    )
    config = load_config(home=home)
    config.telegram.api_url = telegram.root
    check = await doctor._telegram(config)
    assert check.ok, check.detail
    assert f"{telegram.root}/bot{telegram.token}/getMe" in proxy.targets


async def test_an_mcp_server_over_http_is_reached_through_the_proxy_variables(
    tmp_path: Path, proxy: RecordingProxy, clean_environment: pytest.MonkeyPatch
) -> None:
    process, url = await start_http_server("json")
    clean_environment.setenv("HTTP_PROXY", proxy.url)
    manager = manager_for(tmp_path, server_table("web", url=url, read_only_tools=["lookup"]))
    manager.start(lambda server, listed: None)
    try:
        server = manager.servers["web"]
        await asyncio.wait_for(server.wait_ready(), 30)
        assert "3 letters" in str((await server.call("lookup", {"word": "fig"})).content)
    finally:
        await manager.close()
        process.terminate()
        await process.wait()
    assert url in proxy.targets


# The browser's guard proxy (augure.tools.browser.proxy) goes out through the same variables.
# The page echoes a WebSocket message: Chromium opens ws:// through its proxy with CONNECT, so
# one page load shows both of the guard's paths, a plain request and a tunnel.
ECHO_PAGE = """<!doctype html><title>Echo</title><p id="echo">waiting</p>
<script>
const socket = new WebSocket("ws://" + location.host + "/socket");
socket.onopen = () => socket.send("ping");
socket.onmessage = (event) => document.getElementById("echo").textContent = event.data;
</script>"""


@contextlib.asynccontextmanager
async def echo_site() -> AsyncIterator[str]:
    async def page(_: web.Request) -> web.Response:
        return web.Response(text=ECHO_PAGE, content_type="text/html")

    async def socket(request: web.Request) -> web.WebSocketResponse:
        answer = web.WebSocketResponse()
        await answer.prepare(request)
        async for message in answer:
            await answer.send_str(f"echo {message.data}")
        return answer

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/socket", socket)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def trusting(authority: str) -> HostCheck:
    """The guard's check, except that the loopback site stands in for a public web site."""

    async def check(host: str, port: int) -> list[IPAddress]:
        if f"{host}:{port}" == authority:
            return [ipaddress.ip_address(host)]
        return await public_only(host, port)

    return check


async def browsed(site: str) -> str:
    """Open the echo page in a guarded Chromium; what the page shows once its socket answered."""
    executable = find_executable(BrowserSettings())
    assert executable
    pool = BrowserPool(executable, check=trusting(site))
    try:
        page = (await pool.session("proxied", create=True)).page
        await page.goto(f"http://{site}/")
        await page.wait_for_function("document.getElementById('echo').textContent !== 'waiting'")
        return await page.inner_text("#echo")
    finally:
        await pool.close()


@pytest.mark.system_package("chromium")
async def test_the_browser_goes_through_the_variables_http_proxy(
    clean_environment: pytest.MonkeyPatch,
) -> None:
    async with echo_site() as site, RecordingProxy(tunnels=True) as proxy:
        clean_environment.setenv("ALL_PROXY", proxy.url)
        assert await browsed(site) == "echo ping"
    assert f"http://{site}/" in proxy.targets
    assert f"CONNECT {site}" in proxy.targets


@pytest.mark.system_package("chromium")
async def test_the_browser_goes_through_the_variables_socks5_proxy(
    clean_environment: pytest.MonkeyPatch,
) -> None:
    async with echo_site() as site, RecordingSocks() as socks:
        clean_environment.setenv("ALL_PROXY", socks.url)
        assert await browsed(site) == "echo ping"
    assert socks.targets.count(site) >= 2  # the page and the socket


@pytest.mark.system_package("chromium")
async def test_no_proxy_keeps_the_browser_direct(clean_environment: pytest.MonkeyPatch) -> None:
    async with echo_site() as site, RecordingProxy(tunnels=True) as proxy:
        clean_environment.setenv("ALL_PROXY", proxy.url)
        clean_environment.setenv("NO_PROXY", "127.0.0.1")
        assert await browsed(site) == "echo ping"
    assert proxy.targets == []


async def test_the_guard_signs_in_to_the_proxy_and_never_shows_the_password(
    clean_environment: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Driven by hand: a proxy that refuses the tunnel is named in the guard's answer to the
    browser, without its credentials, which it was sent."""
    caplog.set_level(logging.DEBUG)
    async with RecordingProxy() as proxy:
        address = proxy.url.removeprefix("http://")
        clean_environment.setenv("HTTPS_PROXY", f"http://owner:s%3Dcret@{address}")
        guard = GuardProxy(trusting("127.0.0.1:9"))
        port = int((await guard.start()).rsplit(":", 1)[1])
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
            answer = (await reader.read()).decode()
            writer.close()
        finally:
            await guard.close()
    assert proxy.targets == ["CONNECT 127.0.0.1:9"]
    assert proxy.authorizations == ["Basic " + base64.b64encode(b"owner:s=cret").decode()]
    assert answer.startswith("HTTP/1.1 502 Bad Gateway\r\n")
    assert f"http://{address}" in answer and "403" in answer
    assert "cret" not in answer and "owner" not in answer
    assert "cret" not in caplog.text
