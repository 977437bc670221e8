"""Folded follow-ups and albums (docs/telegram.md, "Follow-ups and albums") through the real
bot, the fake Telegram and the scripted model: requests are counted at the fake endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from augure.core.recovery import INTERRUPTED_UNSEEN
from augure.tools.base import RunContext, ToolResult, tool
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import environment, is_clock, this_turn, until
from tests.e2e.test_chat_experience import png
from tests.e2e.test_durability import crash, restart_twice
from tests.fakes.openai import FakeOpenAI, Reply, text
from tests.fakes.openai import tool as tool_call
from tests.fakes.telegram import FakeTelegram


def owner_words(request: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in request["messages"] if m["role"] == "user" and not is_clock(m)]


def stored_user_messages(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute("SELECT content FROM messages WHERE role = 'user' ORDER BY id")
        return [row[0] for row in rows]


async def answers(telegram: FakeTelegram, count: int) -> list[str]:
    await telegram.wait_for("sendMessage", count=count, timeout=20)
    await telegram.wait_idle(quiet=0.5, timeout=10)
    return [m["text"] for m in telegram.messages(OWNER)]


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {"AUGURE__TELEGRAM__STREAMING": "false"}


# Set by a test once the owner's next message waits in the inbox: the tool works until then.
MORE_WAITING: list[asyncio.Event] = []


@tool("look_up")
async def look_up(ctx: RunContext, what: str) -> ToolResult:
    """Looks something up (slowly: until the owner has written again)."""
    await MORE_WAITING[-1].wait()
    return ToolResult.ok(f"{what}: found")


def fresh_events() -> None:
    MORE_WAITING.append(asyncio.Event())


pytestmark = pytest.mark.tools(look_up, reset=fresh_events)


async def test_a_message_sent_while_a_tool_runs_is_read_before_the_model_answers(
    bot: Bot,
) -> None:
    """Not a turn of its own: the model reads it after the tool's result, and one answer
    covers both (a lone message is not held back: the first starts its turn at once)."""
    bot.llm.script(tool_call("look_up", {"what": "trains"}), text("the 9:12, and yes"))
    bot.telegram.inject_message(OWNER, "next train?")
    await bot.llm.wait_requests(1, timeout=10)
    bot.telegram.inject_message(OWNER, "and is it on time?")
    await until(bot.home / "state.db", "SELECT 1 FROM inbox WHERE content = 'and is it on time?'")
    MORE_WAITING[-1].set()

    assert await answers(bot.telegram, 1) == ["the 9:12, and yes"]
    first, then = bot.llm.requests
    assert this_turn(first) == ["next train?"]
    assert this_turn(then) == ["and is it on time?"]
    assert then["messages"][-3]["role"] == "tool"  # after the tool's result, before the answer
    assert stored_user_messages(bot.home / "state.db") == ["next train?", "and is it on time?"]
    with contextlib.closing(sqlite3.connect(bot.home / "state.db")) as connection:
        assert connection.execute("SELECT count(*) FROM inbox").fetchone()[0] == 0
        assert connection.execute("SELECT count(*) FROM turns").fetchone()[0] == 1


async def test_three_messages_during_a_slow_turn_are_answered_in_one_further_call(
    bot: Bot,
) -> None:
    bot.llm.script(text("first answer", delay=2.0), text("one answer to all three"))
    bot.telegram.inject_message(OWNER, "first")
    await bot.llm.wait_requests(1, timeout=10)
    for word in ("second", "third", "fourth"):
        bot.telegram.inject_message(OWNER, word)
        await asyncio.sleep(0.05)

    assert await answers(bot.telegram, 2) == ["first answer", "one answer to all three"]
    assert len(bot.llm.requests) == 2
    folded = bot.llm.requests[1]
    assert this_turn(folded) == ["second", "third", "fourth"]
    clock = [n for n, m in enumerate(folded["messages"]) if is_clock(m)]
    assert clock == [len(folded["messages"]) - 2]  # the time, just before the newest
    # Each is kept in the history, in order, as its own message.
    assert stored_user_messages(bot.home / "state.db") == ["first", "second", "third", "fourth"]
    bot.llm.script(text("ok"))
    bot.telegram.inject_message(OWNER, "fifth")
    await answers(bot.telegram, 3)
    assert owner_words(bot.llm.requests[-1])[:4] == ["first", "second", "third", "fourth"]


@pytest.mark.parametrize("bot_env", [{"AUGURE__TELEGRAM__FOLD_SECONDS": "1.0"}])
async def test_messages_within_fold_seconds_are_answered_in_one_call(bot: Bot) -> None:
    bot.llm.script(text("both at once"))
    bot.telegram.inject_message(OWNER, "book a table")
    await asyncio.sleep(0.3)  # well within fold_seconds (1.0 here; 0 by default)
    bot.telegram.inject_message(OWNER, "for four people")

    assert await answers(bot.telegram, 1) == ["both at once"]
    (request,) = bot.llm.requests
    assert this_turn(request) == ["book a table", "for four people"]


@pytest.mark.parametrize("bot_env", [{"AUGURE__TELEGRAM__FOLD_SECONDS": "0"}])
async def test_fold_seconds_zero_still_folds_what_arrives_during_a_turn(bot: Bot) -> None:
    bot.llm.script(text("a", delay=1.5), text("b and c"), text("d"))
    bot.telegram.inject_message(OWNER, "a?")
    await bot.llm.wait_requests(1, timeout=10)
    bot.telegram.inject_message(OWNER, "b?")
    bot.telegram.inject_message(OWNER, "c?")
    await answers(bot.telegram, 2)
    # Without a window, a message sent once the chat is idle starts its turn on its own.
    bot.telegram.inject_message(OWNER, "d?")
    await answers(bot.telegram, 3)

    _, folded, alone = bot.llm.requests
    assert this_turn(folded) == ["b?", "c?"]
    assert this_turn(alone) == ["d?"]


@pytest.mark.parametrize("bot_env", [{"AUGURE__TELEGRAM__FOLD_SECONDS": "0"}])
async def test_a_two_photo_album_is_one_model_request_with_both_images(bot: Bot) -> None:
    bot.llm.script(text("two cats"))
    bot.telegram.inject_album(OWNER, [png(4, 3), png(6, 5)], caption="which is cuter?")

    assert await answers(bot.telegram, 1) == ["two cats"]
    (request,) = bot.llm.requests
    (album,) = this_turn(request)  # one user message, both parts in it
    images = [part for part in album if part["type"] == "image_url"]
    assert len(images) == 2
    assert images[0]["image_url"]["url"] != images[1]["image_url"]["url"]
    assert "which is cuter?" in album[0]["text"]
    (kept,) = stored_user_messages(bot.home / "state.db")
    assert kept.count("[image]") == 2 and "[Now: " not in kept  # no images or clock kept


@pytest.mark.parametrize("bot_env", [{"AUGURE__TELEGRAM__FOLD_SECONDS": "0"}])
async def test_an_album_of_documents_is_one_message(bot: Bot) -> None:
    bot.llm.script(text("read both"))
    bot.telegram.inject_album(OWNER, [("a.txt", b"alpha"), ("b.txt", b"beta")], caption="these")

    await answers(bot.telegram, 1)
    (request,) = bot.llm.requests
    (album,) = this_turn(request)
    assert "a.txt" in album and "b.txt" in album and album.index("a.txt") < album.index("b.txt")


async def test_kill_after_a_folded_turn_is_stored_tells_the_owner_once_and_keeps_each(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        slow: Reply = text("first answer", delay=3.0)
        folded = (
            "SELECT 1 WHERE (SELECT count(*) FROM turns WHERE status = 'running') = 1 "
            "AND (SELECT count(*) FROM messages WHERE role = 'user') = 3"
        )

        async def follow_ups() -> None:
            await llm.wait_requests(1, timeout=20)
            llm.script(text("never seen", delay=30))
            telegram.inject_message(OWNER, "second")
            telegram.inject_message(OWNER, "third")

        sending = asyncio.create_task(follow_ups())
        await crash(env, telegram, llm, slow, "first", folded)
        await sending
        asked = len(llm.requests)
        first, second = await restart_twice(env, telegram, recovered=INTERRUPTED_UNSEEN)
        assert first == INTERRUPTED_UNSEEN and second == ""
        assert stored_user_messages(tmp_path / "state.db") == ["first", "second", "third"]
        assert len(llm.requests) == asked  # nothing asked again after the restarts
