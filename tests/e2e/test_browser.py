"""The browser tool against real Chromium and a small site served on loopback.

One Chromium serves most tests (a module-scoped pool on the module's event loop); the SSRF
test starts a second, guarded one, and the bot test a third through the app's shared pool.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from augure.config.settings import Config
from augure.tools import browser as browser_module
from augure.tools.base import RunContext
from augure.tools.browser import browser, probe
from augure.tools.browser.actions import BrowserStep, act
from augure.tools.browser.proxy import GuardProxy, HostCheck, public_only
from augure.tools.browser.session import BrowserError, BrowserPool
from augure.tools.browser.settings import BrowserSettings, find_executable
from augure.tools.netguard import IPAddress
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import is_answer
from tests.fakes.openai import FakeOpenAI, text, tool
from tests.fakes.telegram import FakeTelegram

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.system_package("chromium")]

# None without Chromium: every test here is then skipped by the marker above.
CHROMIUM = find_executable(BrowserSettings())

HOME = """<!doctype html><title>Home</title>
<h1>Welcome</h1>
<a href="/article">Read the article</a>
<a href="/article" target="_blank">Article in a new tab</a>
<form onsubmit="return false">
  <input id="name" placeholder="Your name">
  <button type="button"
    onclick="out.textContent = 'Hello ' + document.getElementById('name').value">Send</button>
  <input id="search" placeholder="Search"
    onkeydown="if (event.key === 'Enter') found.textContent = 'Searched ' + this.value">
</form>
<p id="out">Nobody greeted yet</p>
<p id="found">No search yet</p>
"""
ARTICLE = "<!doctype html><title>Article</title><h1>A long article</h1>" + "".join(
    f"<p>Paragraph {n}: the quick brown fox jumps over the lazy dog again and again.</p>"
    for n in range(400)
)
# Reports each fetch's outcome in the page, so the test knows both have settled.
LEAKY = """<!doctype html><title>Leaky</title><p id="meta">pending</p><p id="local">pending</p>
<script>
for (const [id, url] of [["meta", "http://169.254.169.254/latest/meta-data/"],
                         ["local", "{victim}/secret"]]) {{
  fetch(url, {{mode: "no-cors"}}).catch(() => null)
    .finally(() => document.getElementById(id).textContent = "settled");
}}
</script>"""


Handler = Callable[[web.Request], Awaitable[web.Response]]


@dataclass
class Server:
    url: str
    port: int
    hits: list[str] = field(default_factory=list)


async def serve(app: web.Application, hits: list[str]) -> tuple[web.AppRunner, Server]:
    @web.middleware
    async def record(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        hits.append(request.path)
        return await handler(request)

    app.middlewares.append(record)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    return runner, Server(f"http://127.0.0.1:{port}", port, hits)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def victim() -> AsyncIterator[Server]:
    """A service on loopback that a guarded browser must never reach."""

    async def secret(_: web.Request) -> web.Response:
        return web.Response(text="internal secret")

    app = web.Application()
    app.router.add_get("/secret", secret)
    runner, server = await serve(app, [])
    yield server
    await runner.cleanup()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site(victim: Server) -> AsyncIterator[Server]:
    def page(body: str) -> Handler:
        async def handler(_: web.Request) -> web.Response:
            return web.Response(text=body, content_type="text/html")

        return handler

    async def redirect(_: web.Request) -> web.Response:
        raise web.HTTPFound(f"{victim.url}/secret")

    app = web.Application()
    app.router.add_get("/", page(HOME))
    app.router.add_get("/article", page(ARTICLE))
    app.router.add_get("/leaky", page(LEAKY.format(victim=victim.url)))
    app.router.add_get("/redirect", redirect)
    runner, server = await serve(app, [])
    yield server
    await runner.cleanup()


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool(clock: Clock) -> AsyncIterator[BrowserPool]:
    assert CHROMIUM
    shared = BrowserPool(CHROMIUM, allow_private=True, clock=clock, ttl=600, max_sessions=4)
    yield shared
    await shared.close()


def trusting(site_port: int) -> HostCheck:
    async def check(host: str, port: int) -> list[IPAddress]:
        # The test site stands in for a public web site; everything else meets the real guard.
        if (host, port) == ("127.0.0.1", site_port):
            return [ipaddress.ip_address(host)]
        return await public_only(host, port)

    return check


def ref_of(snapshot: str, role_and_name: str) -> str:
    match = re.search(re.escape(role_and_name) + r".*?\[ref=(\w+)\]", snapshot)
    assert match, f"{role_and_name} not in snapshot:\n{snapshot}"
    return match.group(1)


async def test_open_snapshot_type_click_extract(pool: BrowserPool, site: Server) -> None:
    opened = await act(pool, BrowserStep("open", "default", url=f"{site.url}/"))
    assert opened.success, opened.output
    assert "(HTTP 200)" in opened.output and "Page: Home" in opened.output

    snapshot = (await act(pool, BrowserStep("snapshot", "default"))).output
    name_box = ref_of(snapshot, 'textbox "Your name"')
    send = ref_of(snapshot, 'button "Send"')

    typed = await act(pool, BrowserStep("type", "default", ref=name_box, text="Ada"))
    assert typed.output == f"Typed 3 characters into ref {name_box}."
    clicked = await act(pool, BrowserStep("click", "default", ref=send))
    assert clicked.success and f"Clicked ref {send}." in clicked.output

    extracted = await act(pool, BrowserStep("extract", "default", selector="#out"))
    assert extracted.output.endswith("\n\nHello Ada")
    whole = await act(pool, BrowserStep("extract", "default"))
    assert "Hello Ada" in whole.output and "Nobody greeted yet" not in whole.output
    # The same readable text as `http`: headings and links as Markdown, links absolute.
    assert "# Welcome" in whole.output
    assert f"[Read the article]({site.url}/article)" in whole.output


async def test_link_navigation_press_and_long_text(pool: BrowserPool, site: Server) -> None:
    await act(pool, BrowserStep("open", "default", url=f"{site.url}/"))
    snapshot = (await act(pool, BrowserStep("snapshot", "default"))).output
    link = ref_of(snapshot, 'link "Read the article"')
    clicked = await act(pool, BrowserStep("click", "default", ref=link))
    assert f"Now at {site.url}/article (Article)." in clicked.output

    await act(pool, BrowserStep("navigate", "default", url=f"{site.url}/"))
    snapshot = (await act(pool, BrowserStep("snapshot", "default"))).output
    new_tab = ref_of(snapshot, 'link "Article in a new tab"')
    followed = await act(pool, BrowserStep("click", "default", ref=new_tab))
    assert f"Now at {site.url}/article (Article)." in followed.output

    article = await act(pool, BrowserStep("extract", "default"))
    assert "Paragraph 0:" in article.output
    assert "[text cut at 20000 of " in article.output and "Paragraph 399" not in article.output
    # No more of the page is read than `http` would read of it ([tools.http]
    # max_response_bytes): a page's scripts can make it any size.
    capped = await act(pool, BrowserStep("extract", "default", page_bytes=2000))
    assert "Paragraph 0:" in capped.output and "Paragraph 30:" not in capped.output
    assert "[only the first 2000 of " in capped.output, capped.output[-300:]

    back = await act(pool, BrowserStep("navigate", "default", url=f"{site.url}/"))
    assert back.success and "Page: Home" in back.output
    await act(pool, BrowserStep("type", "default", selector="#search", text="foxes"))
    pressed = await act(pool, BrowserStep("press", "default", selector="#search", key="Enter"))
    assert pressed.output.startswith("Pressed Enter on selector '#search'.")
    assert (await act(pool, BrowserStep("extract", "default", selector="#found"))).output.endswith(
        "Searched foxes"
    )


async def test_screenshot_is_a_png_artifact(pool: BrowserPool, site: Server) -> None:
    await act(pool, BrowserStep("open", "default", url=f"{site.url}/"))
    shot = await act(pool, BrowserStep("screenshot", "default"))
    assert shot.success and "attached as screenshot.png" in shot.output
    (artifact,) = shot.artifacts
    assert artifact.type == "image" and artifact.name == "screenshot.png"
    assert isinstance(artifact.content, bytes)
    assert artifact.content.startswith(b"\x89PNG\r\n\x1a\n") and len(artifact.content) > 1000
    assert f"({len(artifact.content)} bytes, PNG)" in shot.output


async def test_mistakes_come_back_as_clear_errors(pool: BrowserPool, site: Server) -> None:
    await act(pool, BrowserStep("open", "default", url=f"{site.url}/"))
    unknown = await act(pool, BrowserStep("click", "default", ref="e999"))
    assert not unknown.success
    assert unknown.output.startswith("Error: no element with ref e999 on the page;")
    sneaky = await act(pool, BrowserStep("click", "default", ref="e1 >> css=button"))
    assert "is not a ref from snapshot" in sneaky.output
    assert "needs a ref" in (await act(pool, BrowserStep("click", "default"))).output
    assert "type needs text" in (await act(pool, BrowserStep("type", "default", ref="e1"))).output
    missing = await act(pool, BrowserStep("navigate", "elsewhere", url=f"{site.url}/"))
    assert "no open browser session 'elsewhere'" in missing.output
    scheme = await act(pool, BrowserStep("open", "default", url="file:///etc/passwd"))
    assert "only http and https" in scheme.output


async def test_session_cap_and_idle_ttl(pool: BrowserPool, site: Server, clock: Clock) -> None:
    await act(pool, BrowserStep("open", "default", url=f"{site.url}/"))
    clock.now += 600  # every session now idle for the whole TTL
    await pool.expire()
    assert list(pool.sessions) == []

    for name in ("s1", "s2", "s3", "s4", "s5"):
        clock.now += 1
        assert (await act(pool, BrowserStep("open", name, url=f"{site.url}/"))).success
    assert list(pool.sessions) == ["s2", "s3", "s4", "s5"]  # s1 was least recently used
    gone = await act(pool, BrowserStep("snapshot", "s1"))
    assert "no open browser session 's1'" in gone.output

    clock.now += 400
    assert (await act(pool, BrowserStep("snapshot", "s2"))).success  # s2 is fresh again
    clock.now += 300  # s3-s5 idle 700 s, s2 300 s
    assert (await act(pool, BrowserStep("extract", "s2"))).success
    assert list(pool.sessions) == ["s2"]
    assert (await act(pool, BrowserStep("close", "s2"))).output == "Closed browser session 's2'."
    assert "no open browser session 's2'" in (await act(pool, BrowserStep("close", "s2"))).output


async def test_guard_stops_subrequests_and_redirects_to_private_addresses(
    pool: BrowserPool, site: Server, victim: Server
) -> None:
    assert CHROMIUM
    guarded = BrowserPool(CHROMIUM, check=trusting(site.port))
    try:
        opened = await act(guarded, BrowserStep("open", "default", url=f"{site.url}/leaky"))
        assert opened.success, opened.output
        for _ in range(50):
            page = (await act(guarded, BrowserStep("extract", "default"))).output
            if "pending" not in page:
                break
            await asyncio.sleep(0.1)
        assert page.count("settled") == 2, page
        refused = "\n".join(guarded.proxy.blocked if guarded.proxy else [])
        metadata = "169.254.169.254:80: 169.254.169.254 resolves to 169.254.169.254, which is"
        assert f"{metadata} a cloud metadata address" in refused
        assert (
            f"127.0.0.1:{victim.port}: 127.0.0.1 resolves to 127.0.0.1, which is loopback"
            in refused
        )

        redirected = await act(guarded, BrowserStep("open", "default", url=f"{site.url}/redirect"))
        assert redirected.output.startswith(f"Error: refused to open {site.url}/redirect: ")
        assert "loopback" in redirected.output
        assert victim.hits == []
    finally:
        await guarded.close()

    # The same page in a browser allowed on private networks does reach the victim: the
    # guard, not the page, is what kept it out above.
    await act(pool, BrowserStep("open", "default", url=f"{site.url}/leaky"))
    for _ in range(50):
        if victim.hits:
            break
        await asyncio.sleep(0.1)
    assert victim.hits == ["/secret"]


async def test_tool_refuses_loopback_unless_private_networks_are_allowed(
    site: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("AUGURE__"):  # the config below must be the whole story
            monkeypatch.delenv(name)
    config = Config.model_validate({"tools": {"browser": {"headless": True}}})
    ctx = RunContext(config=config, memory=None, store=None)  # type: ignore[arg-type]
    before = len(site.hits)
    refused = await browser.run_ungated({"action": "open", "url": f"{site.url}/"}, ctx)
    assert not refused.success
    assert refused.output == (
        f"Error: refused to open {site.url}/: 127.0.0.1 resolves to 127.0.0.1, which is "
        "loopback; the browser may not reach private networks (tools.http.allow_private_networks)"
    )
    assert len(site.hits) == before

    missing = Config.model_validate(
        {"tools": {"browser": {"executable_path": str(tmp_path / "no-chromium")}}}
    )
    assert browser.config_check(missing) == (
        "install Chromium (apt-get install chromium) or set [tools.browser] executable_path"
    )
    ctx = RunContext(config=missing, memory=None, store=None)  # type: ignore[arg-type]
    unusable = await browser.run_ungated({"action": "open", "url": "https://example.org/"}, ctx)
    assert unusable.output.startswith("Error: the browser is not configured: install Chromium")
    assert (
        browser.config_check(Config.model_validate({"tools": {"browser": {"headless": "maybe"}}}))
        is not None
    )


# The bot test runs on the module's loop too, so the fakes it uses are rebuilt on that loop.
@pytest_asyncio.fixture(loop_scope="module")
async def telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


@pytest_asyncio.fixture(loop_scope="module")
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


async def test_the_bot_browses_and_the_model_gets_the_page(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    site: Server,
) -> None:
    env = {"AUGURE__TOOLS__HTTP__ALLOW_PRIVATE_NETWORKS": "true"}
    bot = Bot(tmp_path / "home", telegram, llm, monkeypatch, extra_env=env, extra_tools=[browser])
    await bot.start()
    try:
        llm.script(
            tool("load_tools", {"names": ["browser"]}),
            tool("browser", {"action": "open", "url": f"{site.url}/"}),
            tool("browser", {"action": "screenshot"}),
            text("The page says Welcome."),
        )
        telegram.inject_message(OWNER, "what does my site say?")
        await telegram.wait_for(
            lambda c: (
                c.method == "sendMessage"
                and is_answer(c.params.get("text"), "The page says Welcome.")
            ),
            timeout=20,
        )
    finally:
        await bot.stop()
        await browser_module.shutdown()
    results = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"]
    opened, shot = results[1], results[2]
    assert opened.startswith('<untrusted_content source="browser">\nOpened ')
    assert 'heading "Welcome"' in opened and "[ref=e" in opened
    assert "attached as screenshot.png" in shot and "bytes, PNG" in shot


async def test_proxy_tunnels_only_to_allowed_destinations(site: Server, victim: Server) -> None:
    """The CONNECT path (https and wss in real use), driven by hand."""
    proxy = GuardProxy(trusting(site.port))
    port = int((await proxy.start()).rsplit(":", 1)[1])
    victim_hits = len(victim.hits)

    async def connect(target: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        return reader, writer, await reader.readuntil(b"\r\n\r\n")

    try:
        reader, writer, head = await connect(f"127.0.0.1:{victim.port}")
        assert head.startswith(b"HTTP/1.1 403 Forbidden\r\n") and b"X-Augure-Blocked: 1" in head
        assert b"loopback" in await reader.read()
        writer.close()
        reader, writer, head = await connect("no-such-host.invalid:443")
        assert head.startswith(b"HTTP/1.1 502 Bad Gateway\r\n")
        writer.close()
        assert proxy.refusals == 1  # a name that does not resolve is not a refusal

        reader, writer, head = await connect(f"127.0.0.1:{site.port}")
        assert head == b"HTTP/1.1 200 Connection Established\r\n\r\n"
        writer.write(b"GET /article HTTP/1.1\r\nHost: site\r\nConnection: close\r\n\r\n")
        assert b"<h1>A long article</h1>" in await reader.read()
        writer.close()
    finally:
        await proxy.close()
    assert len(victim.hits) == victim_hits


async def test_doctor_probe_names_the_browser(tmp_path: Path) -> None:
    version = await probe(Config())
    assert re.fullmatch(rf"Chromium \d+\.[\d.]+ at {CHROMIUM} \(started in \d+\.\d s\)", version)
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    config = Config.model_validate({"tools": {"browser": {"executable_path": str(broken)}}})
    with pytest.raises(BrowserError, match=f"Chromium at {broken} does not start: "):
        await probe(config)
