"""The dashboard (docs/reference/dashboard.md) in a real headless Chromium, served by `augure run`'s
own wiring (`serve` with the dashboard as a companion) against the fake Telegram and the scripted
model.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect

from augure.channels.telegram.bot import serve
from augure.config.settings import Config, load_config
from augure.core.app import Core
from augure.core.lifespan import Augure, Opened, Plugs
from augure.dashboard.server import Dashboard
from augure.tools.browser.settings import BrowserSettings, find_executable
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import REJECTED, approval_message, delivered, final_reply, tool_results
from tests.fakes.openai import FakeOpenAI, text, tool
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.system_package("chromium")

SECRET = "sk-test-secret-key"  # the OPENAI_API_KEY of bot_environment


@dataclass
class Served:
    bot: Bot  # for the shared helpers: the same telegram, llm and home
    dashboard: Dashboard
    browser: Browser
    core: Core  # the bot's own parts, as `serve` opened them

    @property
    def root(self) -> str:
        """Where the pages are: under the dashboard's per-run path prefix."""
        return self.dashboard.pages

    @property
    def own_origin(self) -> dict[str, str]:
        """What a form of the dashboard's own pages sends: requests made outside a page must
        say it, or the Origin check refuses them before anything else is looked at."""
        return {"Origin": self.dashboard.root}

    async def login_link(self) -> str:
        """The owner sends /dashboard in Telegram and gets the link back, as in real use."""
        before = len(self.bot.telegram.sent("sendMessage"))
        self.bot.telegram.inject_message(OWNER, "/dashboard")
        calls = await self.bot.telegram.wait_for("sendMessage", count=before + 1, timeout=10)
        reply = str(calls[-1].params["text"])
        (link,) = [word for word in reply.split() if word.startswith("http")]
        return link

    async def logged_in(self) -> tuple[BrowserContext, Page]:
        context = await self.browser.new_context()
        page = await context.new_page()
        await page.goto(await self.login_link())
        await page.click("button#login")  # the link's GET logs nobody in; its button does
        await page.wait_for_url(f"{self.root}/")
        return context, page


def seen_opened(monkeypatch: pytest.MonkeyPatch) -> list[Core]:
    """The parts behind the door `serve` opens: the door the dashboard is given has none, so
    the test notes them as the lifespan opens them."""
    cores: list[Core] = []
    opened = Augure.opened

    @contextlib.asynccontextmanager
    async def noted(config: Config, **plugs: Unpack[Plugs]) -> AsyncIterator[Opened]:
        async with opened(config, **plugs) as both:
            cores.append(both.core)
            yield both

    monkeypatch.setattr(Augure, "opened", staticmethod(noted))
    return cores


@pytest.fixture
async def served(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Served]:
    chromium = find_executable(BrowserSettings())
    assert chromium is not None  # the system_package marker skipped the test otherwise
    home = tmp_path / "home"
    environment = bot_environment(home, telegram, llm) | {
        "AUGURE__DASHBOARD__ENABLED": "true",
        "AUGURE__DASHBOARD__PORT": "0",  # a free port; the link says which
    }
    for name in list(os.environ):
        if name.startswith("AUGURE__"):
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    config = load_config()
    dashboard = Dashboard(config.dashboard)
    cores = seen_opened(monkeypatch)
    stop = asyncio.Event()
    test_tools.reset()
    running = asyncio.create_task(serve(config, stop, test_tools.TEST_TOOLS, [dashboard]))
    while dashboard.door is None or dashboard.door.logins.served_at is None:
        assert not running.done(), running.exception()
        await asyncio.sleep(0.05)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium, headless=True, args=["--no-sandbox"]
        )
        try:
            (core,) = cores
            yield Served(Bot(home, telegram, llm, monkeypatch), dashboard, browser, core)
        finally:
            await browser.close()
            stop.set()
            await running


async def status_of(page: Page, url: str) -> int:
    response = await page.goto(url)
    assert response is not None
    return response.status


async def test_a_login_link_from_telegram_works_once(served: Served) -> None:
    link = await served.login_link()
    first = await served.browser.new_context()
    page = await first.new_page()
    await page.goto(link)
    await page.click("button#login")
    await page.wait_for_url(f"{served.root}/")  # redirected: the token leaves the address bar
    assert await page.locator("h1").inner_text() == "Overview"
    cookie = next(c for c in await first.cookies() if c["name"] == "augure_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

    second = await served.browser.new_context()
    again = await second.new_page()
    assert await status_of(again, link) == 200  # the page with its button: a GET spends nothing
    async with again.expect_response(lambda r: r.request.method == "POST") as posted:
        await again.click("button#login")
    assert (await posted.value).status == 401
    assert "spent, expired or wrong" in await again.locator("main").inner_text()
    assert await status_of(again, f"{served.root}/approvals") == 401


async def test_without_a_session_every_page_is_401_with_the_login_page(served: Served) -> None:
    context = await served.browser.new_context()
    page = await context.new_page()
    for path in ("/", "/approvals", "/invocations", "/rules", "/jobs", "/skills", "/usage"):
        assert await status_of(page, served.root + path) == 401, path
        assert await page.locator("input[name=token]").count() == 1
    forged = await context.request.post(
        f"{served.root}/jobs/pause", form={"csrf": "x"}, headers=served.own_origin
    )
    assert forged.status == 401
    assert not await served.core.scheduler.paused()
    # The login form takes a pasted token.
    await page.fill("input[name=token]", (await served.login_link()).split("token=")[1])
    await page.click("button:has-text('Log in')")
    await expect(page.locator("h1")).to_have_text("Overview")


async def test_approve_runs_the_call_and_edits_the_telegram_message(served: Served) -> None:
    bot = served.bot
    bot.llm.script(tool("send_note", {"to": "alice", "text": "hi"}), text("Sent it."))
    bot.telegram.inject_message(OWNER, "tell alice hi")
    message = await approval_message(bot)
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/approvals")
    request = page.locator("article.request")
    shown = await request.inner_text()
    assert "send_note" in shown and '"to": "alice"' in shown
    await request.locator("button.approve").click()
    assert "Approved." in await page.locator(".note").inner_text()

    await final_reply(bot, "Sent it.")
    assert test_tools.outbox(bot.home) == [{"to": "alice", "text": "hi"}]
    (edited,) = [
        m for m in bot.telegram.messages(OWNER) if m["message_id"] == message["message_id"]
    ]
    assert "Approved" in edited["text"] and not edited.get("reply_markup")
    assert bot.telegram.sent("editMessageText")
    (record,) = await served.core.audit.listing(tool="send_note")
    assert record["decided_by"] == "dashboard" and record["status"] == "completed"


async def test_reject_tells_the_model_and_edits_the_telegram_message(served: Served) -> None:
    bot = served.bot
    hidden = "pay\u202egnp.exe"  # a right-to-left override would show "payexe.png"
    bot.llm.script(tool("send_note", {"to": "bob", "text": hidden}), text("OK, not sent."))
    bot.telegram.inject_message(OWNER, "tell bob x")
    message = await approval_message(bot)
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/approvals")
    assert "pay\\u202egnp.exe" in await page.locator("article.request").inner_text()
    await page.fill("input[name=reason]", "not today")
    await page.click("button.reject")
    await final_reply(bot, "OK, not sent.")
    assert tool_results(bot.llm) == [f"{REJECTED} Reason: not today"]
    assert test_tools.outbox(bot.home) == []
    (edited,) = [
        m for m in bot.telegram.messages(OWNER) if m["message_id"] == message["message_id"]
    ]
    assert "Rejected (not today)" in edited["text"] and not edited.get("reply_markup")
    (record,) = await served.core.audit.listing(tool="send_note")
    assert record["decided_by"] == "dashboard" and record["approval_status"] == "rejected"
    await page.goto(f"{served.root}/approvals")
    assert "Nothing waits for a decision." in await page.locator("main").inner_text()


async def test_revoke_a_rule(served: Served) -> None:
    audit = served.core.audit
    kept = await audit.add_rule("deny", "http:host=evil.example", "test")
    gone = await audit.add_rule("allow", "send_note:to=alice", "test")
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/rules")
    await page.locator(f"#rule-{gone.id} button").click()
    assert "Rule revoked." in await page.locator(".note").inner_text()
    assert [rule.id for rule in await audit.rules()] == [kept.id]
    assert await page.locator(f"#rule-{gone.id}").count() == 0


async def test_pause_resume_and_run_a_job_now(served: Served) -> None:
    scheduler = served.core.scheduler
    await scheduler.create(
        prompt="say the daily word", chat_id=str(OWNER), cron="0 9 * * *", job_id="word"
    )
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/jobs")
    assert await page.locator("#scheduler-state").inner_text() == "active"
    await page.click("text=Pause all jobs")
    await expect(page.locator("#scheduler-state")).to_have_text("paused")
    assert await scheduler.paused()
    await page.click("text=Resume all jobs")
    await expect(page.locator("#scheduler-state")).to_have_text("active")
    assert not await scheduler.paused()

    served.bot.llm.script(text("The word is ubiquity."))
    await page.locator("#job-word button:has-text('Run now')").click()
    assert "will run" in await page.locator(".note").inner_text()
    await delivered(served.bot.telegram, "The word is ubiquity.")


async def test_a_post_without_the_csrf_token_is_refused(served: Served) -> None:
    rule = await served.core.audit.add_rule("allow", "send_note:to=alice", "test")
    context, _ = await served.logged_in()
    url = f"{served.root}/rules/{rule.id}/revoke"
    # The session cookie goes with these requests (same context): only the token is missing.
    origin = served.own_origin
    assert (await context.request.post(url, form={}, headers=origin)).status == 403
    assert (await context.request.post(url, form={"csrf": "guess"}, headers=origin)).status == 403
    assert [r.id for r in await served.core.audit.rules()] == [rule.id]


async def test_untrusted_output_is_shown_as_text_and_secrets_never(served: Served) -> None:
    audit = served.core.audit
    hostile = (
        "<script>window.pwned = 1</script><img src=x onerror='window.pwned = 2'>"
        f" and the key {SECRET}"
    )
    invocation = await audit.create(
        tool="fetch_page",
        origin="chat",
        arguments={"url": "https://example.com/<b>bold</b>"},
        chat_id=str(OWNER),
        turn_id=None,
        target=None,
        approval_status="not_required",
    )
    await audit.finished(invocation, success=True, output=hostile, cost_estimate=0)
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/invocations/{invocation}")
    shown = await page.locator("#output").inner_text()
    assert "<script>window.pwned = 1</script>" in shown  # as text: escaped, not parsed
    assert await page.evaluate("window.pwned") is None
    assert "<b>bold</b>" in await page.locator("#input").inner_text()
    html: Any = await page.content()
    assert SECRET not in html and "[REDACTED" in shown
    # The listing links to it, filtered by tool.
    await page.goto(f"{served.root}/invocations?tool=fetch_page")
    link = f"{served.dashboard.base}/invocations/{invocation}"
    assert await page.locator(f"a[href='{link}']").count() == 1


async def test_dashboard_command_in_a_group_sends_no_link(served: Served) -> None:
    telegram = served.bot.telegram
    telegram.inject_message(OWNER, "/dashboard", chat_id=-500, chat_type="group")
    calls = await telegram.wait_for(
        lambda c: c.method == "sendMessage" and c.params.get("chat_id") in (-500, "-500")
    )
    reply = str(calls[0].params["text"])
    assert "only in our private chat" in reply and "token=" not in reply


async def test_invocations_are_paged_and_filtered(served: Served) -> None:
    audit = served.core.audit
    for n in range(60):
        await audit.create(
            tool="fetch_page" if n % 2 else "launch",
            # A job's own calls and those it handed on (its code, a skill) are all its work.
            origin=("job", "job>code", "job>skill:digest")[n % 9 // 3] if n % 3 == 0 else "chat",
            arguments={"n": n},
            chat_id=None,
            turn_id=None,
            target=None,
            approval_status="not_required",
        )
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/invocations")
    rows = page.locator("tbody tr")
    await expect(rows).to_have_count(50)
    await page.click("a[rel=next]")
    await expect(rows).to_have_count(10)
    assert await page.locator("a[rel=next]").count() == 0

    await page.goto(f"{served.root}/invocations")
    await page.select_option("select[name=tool]", "fetch_page")
    await page.select_option("select[name=origin]", "job")
    await page.click("button:has-text('Filter')")
    await expect(rows).to_have_count(10)  # odd n that are multiples of 3, under 60
    tools = await page.locator("tbody tr td:nth-child(2)").all_inner_texts()
    assert set(tools) == {"fetch_page"}
    shown = await page.locator("tbody tr td:nth-child(3)").all_inner_texts()
    assert set(shown) == {"job", "job>code", "job>skill:digest"}  # the whole chain, each


async def test_memory_files_are_read_inside_the_memory_folder_only(served: Served) -> None:
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/memory")
    await page.click("text=identity.md")
    assert "Augure" in await page.locator("pre").inner_text()
    for path in ("../state.db", "/etc/passwd", "..%2Faugure.toml"):
        assert await status_of(page, f"{served.root}/memory?path={path}") == 404, path


async def test_the_usage_page_shows_spend_against_the_caps_by_kind_of_work(
    served: Served,
) -> None:
    served.bot.llm.script(text("Counted.", usage=(1000, 10)))
    served.bot.telegram.inject_message(OWNER, "hello")
    await final_reply(served.bot, "Counted.")
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/usage")
    headings = await page.locator("h3").all_inner_texts()
    assert headings[0].startswith("Today (") and "(no daily cap)" in headings[0]
    row = await page.locator("table.spend tr", has_text="chat").first.inner_text()
    assert row.split("\t")[:6] == ["chat", "1", "0", "1000", "0", "10"]
    assert row.split("\t")[-1] == "1 call(s)"  # no price set: of unknown cost, never free
