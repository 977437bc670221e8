"""Long calls show one status message in the chat (docs/reference/execution.md#progress): through
the fake Telegram and the scripted model, with the real board; sandbox lines reported as they
arrive."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from augure.channels.telegram.progress import telegram_board
from augure.common.caller import Caller
from augure.common.progress import StatusBoard
from augure.config.execution import SandboxConfig
from augure.config.settings import load_config
from augure.memory.store import MemoryStore
from augure.sandbox.base import OUTPUT_CAP
from augure.tools.base import RunContext, ToolResult, tool
from augure.tools.browser import browser
from augure.tools.sandbox_exec import sandbox_exec
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import approval_message, buttons, final_reply, tool_results
from tests.fakes.openai import ToolCall, text, tools
from tests.fakes.openai import tool as tool_call
from tests.fakes.telegram import ApiCall, FakeTelegram

bubblewrap = pytest.mark.system_package("bubblewrap")
# Time the bot side may wake before its sleep is due (the event loop's clock resolution).
EARLY = 0.01


@tool("slow_steps")
async def slow_steps(ctx: RunContext, n: int, seconds: float) -> AsyncIterator[str | ToolResult]:
    """Works for `seconds`, saying which step it is at."""
    steps = int(seconds / 0.25)
    for step in range(1, steps + 1):
        yield f"call {n}: step {step} of {steps}"
        await asyncio.sleep(0.25)
    yield ToolResult.ok(f"call {n} done")


@tool("quiet_wait")
async def quiet_wait(ctx: RunContext, seconds: float) -> AsyncIterator[str | ToolResult]:
    """Says one thing, then waits in silence."""
    yield "waiting in silence"
    await asyncio.sleep(seconds)
    yield ToolResult.ok("waited")


pytestmark = pytest.mark.tools(sandbox_exec, slow_steps, quiet_wait)


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {"AUGURE__SANDBOX__TIMEOUT_SECONDS": "30"}


@pytest.fixture
async def quick(bot: Bot) -> AsyncIterator[Callable[[float, float], StatusBoard]]:
    """The bot's board rebuilt with a lower threshold and interval, so tests stay short."""
    made: list[StatusBoard] = []

    def build(threshold: float, interval: float) -> StatusBoard:
        assert bot.channel is not None and bot.core is not None
        board = telegram_board(bot.channel.delivery, threshold, interval)
        bot.core.executor.progress = board
        made.append(board)
        return board

    yield build
    for board in made:
        await board.close()


def status_posts(telegram: FakeTelegram) -> list[ApiCall]:
    return [c for c in telegram.sent("sendMessage") if str(c.params.get("text")).startswith("⏳")]


def history(telegram: FakeTelegram, post: ApiCall) -> list[ApiCall]:
    """The status message's post and every edit of it, in order; none refused (Telegram
    refuses an edit that changes nothing)."""
    message_id = post.response["result"]["message_id"]
    edits = [
        c
        for c in telegram.calls
        if c.method == "editMessageText" and int(c.params["message_id"]) == message_id
    ]
    assert [c.response for c in edits if c.status != 200] == []
    return [post, *edits]


def assert_paced(calls: list[ApiCall], interval: float) -> None:
    texts = [str(c.params["text"]) for c in calls]
    assert all(a != b for a, b in itertools.pairwise(texts)), texts  # no idle edit
    gaps = [b.at - a.at for a, b in itertools.pairwise(calls)]
    assert all(gap >= interval - EARLY for gap in gaps), gaps


async def outcome(telegram: FakeTelegram, pattern: str) -> ApiCall:
    (last,) = await telegram.wait_for(
        lambda c: c.method == "editMessageText" and bool(re.search(pattern, c.params["text"])),
        timeout=15,
    )
    return last


@bubblewrap
async def test_a_long_sandbox_call_shows_one_status_message_edited_then_its_outcome(
    bot: Bot, quick: Callable[[float, float], StatusBoard]
) -> None:
    quick(1.0, 1.0)
    assert bot.core is not None and bot.core.config.llm.api_key
    secret = bot.core.config.llm.api_key.get_secret_value()
    # The model put a secret in the command: the status message must not show it.
    command = (
        f"echo 'token {secret}'; sleep 1.5; "
        'for i in 1 2 3 4 5; do echo "step $i of 5"; sleep 1; done; echo finished'
    )
    bot.llm.script(tool_call("sandbox_exec", {"command": command}), text("Ran it."))
    bot.telegram.inject_message(OWNER, "count to five in the sandbox")
    message = await approval_message(bot)
    await asyncio.sleep(1.5)  # longer than the threshold: waiting to be approved is not work
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Ran it.")
    last = await outcome(bot.telegram, r"^✓ sandbox_exec — done in \d+ s$")

    (post,) = status_posts(bot.telegram)
    (pressed,) = bot.telegram.sent("answerCallbackQuery")
    assert post.at > pressed.at
    shown = history(bot.telegram, post)
    assert shown[-1] is last and len(shown) >= 4  # posted, edited as it ran, then the outcome
    texts = [str(c.params["text"]) for c in shown]
    assert any(" — step " in t for t in texts)
    assert any(re.search(r" — token \[REDACTED:[\w.]+\]$", t) for t in texts), texts
    assert not [t for t in texts if secret in t]
    assert_paced(shown, 1.0)
    # The progress changed nothing of the result.
    steps = "".join(f"step {i} of 5\n" for i in range(1, 6))
    (result,) = tool_results(bot.llm)
    assert re.fullmatch(
        rf"exit code: 0\nstdout:\ntoken \[REDACTED:[\w.]+\]\n{steps}finished", result
    )


async def test_a_fast_call_shows_nothing(
    bot: Bot, quick: Callable[[float, float], StatusBoard]
) -> None:
    quick(1.0, 1.0)
    bot.llm.script(tool_call("slow_steps", {"n": 1, "seconds": 0.25}), text("Quick."))
    bot.telegram.inject_message(OWNER, "one quick step")
    await final_reply(bot, "Quick.")
    await asyncio.sleep(1.5)  # past the threshold: a forgotten timer would post now
    await bot.telegram.wait_idle()
    assert tool_results(bot.llm) == ["call 1 done"]
    assert bot.telegram.sent("editMessageText") == []
    assert [c.params["text"] for c in bot.telegram.sent("sendMessage")] == ["Quick."]


async def test_nothing_new_to_show_is_no_edit(
    bot: Bot, quick: Callable[[float, float], StatusBoard]
) -> None:
    # Ticks faster than the shown elapsed time (whole seconds) changes, and a silent tool.
    quick(0.5, 0.3)
    bot.llm.script(tool_call("quiet_wait", {"seconds": 2.6}), text("Waited."))
    bot.telegram.inject_message(OWNER, "wait a bit")
    await final_reply(bot, "Waited.")
    await outcome(bot.telegram, r"^✓ quiet_wait — done in \d s$")
    (post,) = status_posts(bot.telegram)
    shown = history(bot.telegram, post)
    assert_paced(shown, 0.3)
    running = [c.params["text"] for c in shown[:-1]]
    assert all(re.fullmatch(r"⏳ quiet_wait — \d s — waiting in silence", t) for t in running)


async def test_the_bot_shows_long_calls_by_default(bot: Bot) -> None:
    bot.llm.script(tool_call("slow_steps", {"n": 7, "seconds": 3.5}), text("Done."))
    bot.telegram.inject_message(OWNER, "a few seconds of work")
    await final_reply(bot, "Done.")
    await outcome(bot.telegram, r"^✓ slow_steps — done in \d s$")
    (post,) = status_posts(bot.telegram)
    assert re.fullmatch(r"⏳ slow_steps — \d s — call 7: step \d+ of 14", post.params["text"])
    assert_paced(history(bot.telegram, post), 3.0)


async def test_flood_control_on_the_status_message_is_waited_out(
    bot: Bot, quick: Callable[[float, float], StatusBoard]
) -> None:
    quick(0.5, 0.5)
    bot.telegram.plan_error("editMessageText", 429, retry_after=1)
    bot.llm.script(tool_call("slow_steps", {"n": 3, "seconds": 2.5}), text("Done."))
    bot.telegram.inject_message(OWNER, "some work")
    await final_reply(bot, "Done.")
    await outcome(bot.telegram, r"^✓ slow_steps — done in \d s$")
    assert len(status_posts(bot.telegram)) == 1
    edits = [c for c in bot.telegram.calls if c.method == "editMessageText"]
    assert [c.status for c in edits[:2]] == [429, 200]
    assert edits[1].params["text"] == edits[0].params["text"]  # the same edit, once it may
    assert edits[1].at - edits[0].at >= 1 - EARLY


async def test_ten_parallel_long_calls_share_one_status_message(
    bot: Bot, quick: Callable[[float, float], StatusBoard]
) -> None:
    quick(0.5, 1.0)
    calls = [ToolCall("slow_steps", {"n": n, "seconds": 3}) for n in range(10)]
    bot.llm.script(tools(*calls), text("All ten done."))
    bot.telegram.inject_message(OWNER, "ten things at once")
    await final_reply(bot, "All ten done.")
    await outcome(bot.telegram, r"^(✓ slow_steps — done in \d s\n){9}✓ slow_steps — done in \d s$")

    (post,) = status_posts(bot.telegram)
    shown = history(bot.telegram, post)
    assert_paced(shown, 1.0)
    # While they ran, every call had its own line at once.
    running = [str(c.params["text"]).splitlines() for c in shown[:-1]]
    assert max(len(lines) for lines in running) == 10
    assert sorted(tool_results(bot.llm)) == sorted(f"call {n} done" for n in range(10))


# The sandbox's lines, straight from the tool (no bot): what a stateful tool reports.


def sandbox_context(tmp_path: Path, heard: list[str]) -> RunContext:
    config = load_config(home=tmp_path / "home")
    config.sandbox = SandboxConfig(timeout_seconds=20, memory_mb=256)
    memory = MemoryStore(config.home / "memory")
    return RunContext(
        config, memory, cast(Any, None), Caller.of("chat", chat_id="chat-a"), report=heard.append
    )


@bubblewrap
async def test_sandbox_reports_its_latest_line_past_the_output_cap(tmp_path: Path) -> None:
    heard: list[str] = []
    ctx = sandbox_context(tmp_path, heard)
    command = (
        f"head -c {OUTPUT_CAP + 10} /dev/zero | tr '\\0' 'y'; echo; sleep 0.3; "
        "printf 'download 10%%\\rdownload 90%%\\r'; sleep 0.3; echo 'warning: late' >&2; "
        "sleep 0.3; printf 'no newline at the end'"
    )
    result = await sandbox_exec.run_ungated({"command": command}, ctx)
    assert "[output cut: only the first 64 KiB of each stream were kept]" in result.content
    assert "warning: late" in result.content
    assert heard[-3:] == ["download 90%", "warning: late", "no newline at the end"]
    assert all(len(line) <= 1024 for line in heard)


async def test_the_browser_says_where_it_goes(tmp_path: Path) -> None:
    heard: list[str] = []
    config = load_config(home=tmp_path / "home")
    config.tools = config.tools.model_validate(
        {"browser": {"executable_path": str(tmp_path / "no-chromium")}}
    )
    ctx = RunContext(
        config, MemoryStore(config.home / "memory"), cast(Any, None), report=heard.append
    )
    await browser.run_ungated({"action": "open", "url": "https://example.org/a"}, ctx)
    await browser.run_ungated({"action": "snapshot", "session": "news"}, ctx)
    assert heard == ["opening https://example.org/a", "snapshot in session 'news'"]
