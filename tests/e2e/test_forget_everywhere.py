"""`augure forget --chat` forgets everywhere (docs/recall.md#forgetting): after it, a phrase
said in the chat through the real flows (a tool call's arguments and output, a saved output,
a background task, a scheduled job's run, the archive) is in no byte of the home, and the
words of another chat are all still there."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from augure.store.archive import Archive, Window
from augure.store.state import Store
from augure.tools.base import Egress, RunContext
from augure.tools.base import tool as tool_of
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import (
    approval_message,
    augure,
    buttons,
    delivered,
    environment,
    hello,
    launch,
    soon,
    until,
)
from tests.fakes.openai import FakeOpenAI, text, tool
from tests.fakes.telegram import FakeTelegram

PHRASE = "Xylofrond quimbleberry vortasse"
OTHER = "Plumtwist harrowgate"
HELPER = OWNER + 2  # a second allowed user, whose chat is not forgotten


@tool_of("jot", egress=Egress.READ_ONLY)
async def jot(ctx: RunContext, note: str) -> str:
    """Jot a note down and read it back at length."""
    return f"jotted: {note}\n" * 800  # longer than one tool message: saved under outputs/


@tool_of("mull", background=True)
async def mull(ctx: RunContext, note: str) -> str:
    """Think a note over (long work, may run in the background)."""
    return f"mulled over: {note}"


class Slow:
    """Lets a test decide when the slow work ends."""

    done: asyncio.Event | None = None


@tool_of("brood", background=True)
async def brood(ctx: RunContext, note: str) -> str:
    """Think a note over for a long while (may run in the background)."""
    Slow.done = Slow.done or asyncio.Event()
    await Slow.done.wait()
    return f"brooded over: {note}"


def fresh_slow() -> None:
    Slow.done = None


pytestmark = pytest.mark.tools(jot, mull, brood, reset=fresh_slow)


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {"AUGURE_ALLOWED_USERS": f"{OWNER},{HELPER}"}


def forms(phrase: str) -> list[bytes]:
    """The ways a phrase may sit in a file: as said, in UTF-16, and the index's words."""
    found = [phrase.encode(), phrase.encode("utf-16-le"), phrase.encode("utf-16-be")]
    for word in phrase.split():
        found += [word.encode(), word.lower().encode()]
    return found


def every_file(home: Path) -> Iterator[Path]:
    for folder, names, files in os.walk(home):
        if Path(folder) == home and "backups" in names:
            names.remove("backups")  # backups made before still hold the words: said so
        for name in files:
            yield Path(folder) / name


def copies(home: Path, phrase: str) -> list[str]:
    """Each file and form of the phrase found in its raw bytes."""
    found = []
    for path in every_file(home):
        data = path.read_bytes()
        found += [f"{path.relative_to(home)}: {form!r}" for form in forms(phrase) if form in data]
    return found


async def _talk(bot: Bot) -> None:
    """The phrase through a tool call, a background task, a job; the other chat's words."""
    bot.llm.script(
        tool("jot", {"note": PHRASE}),
        text(f"Jotted: {PHRASE}."),
        tool("mull", {"note": PHRASE, "background": True}),
        text("Mulling it over."),
        text(f"Mulled over {PHRASE}."),
        tool("schedule", {"action": "create", "run_at": soon(2), "prompt": f"Remind: {PHRASE}",
                          "id": "quimble"}),
        text("I will remind you."),
        text(f"Reminder: {PHRASE}"),
        text(f"Noted: {OTHER}."),
    )  # fmt: skip
    bot.telegram.inject_message(OWNER, f"note this down: {PHRASE}")
    await delivered(bot.telegram, f"Jotted: {PHRASE}.")
    bot.telegram.inject_message(OWNER, f"think over {PHRASE} in the background")
    await delivered(bot.telegram, f"Mulled over {PHRASE}.")
    bot.telegram.inject_message(OWNER, f"remind me of {PHRASE} in two seconds")
    await delivered(bot.telegram, "I will remind you.")
    await delivered(bot.telegram, f"Reminder: {PHRASE}")
    bot.telegram.inject_message(HELPER, f"please note {OTHER}")
    await delivered(bot.telegram, f"Noted: {OTHER}.")


async def test_after_forget_the_phrase_is_in_no_byte_of_the_home(bot: Bot) -> None:
    await _talk(bot)
    assert copies(bot.home, PHRASE), "the flows never stored the phrase"
    assert (bot.home / "outputs").is_dir() and any((bot.home / "outputs").iterdir())

    command = asyncio.create_task(
        augure("forget", "--chat", str(OWNER), env=environment(bot.home), timeout=60)
    )
    message = await approval_message(bot)
    assert "forget_chat" in message["text"]
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    code, out, err = await command
    assert code == 0, out + err
    said = "3 tool calls' arguments and outputs, 1 background tasks, 1 job replies, 1 saved outputs"
    assert said in out
    assert copies(bot.home, PHRASE) == []
    assert "Backups made before still hold" in out
    # The other chat keeps every word, in its history and in the archive.
    assert bot.core is not None
    assert len(await Archive(bot.core.store.db).search("plumtwist", Window(str(HELPER)), 5)) == 2
    assert any(OTHER in line for line in copies(bot.home, OTHER))
    # The chat goes on, from a fresh conversation.
    bot.llm.script(text("Hello again."))
    bot.telegram.inject_message(OWNER, "hello")
    await delivered(bot.telegram, "Hello again.")
    assert all(PHRASE not in str(m) for m in bot.llm.requests[-1]["messages"])
    # Each entry of the home says what forget does to it (a new one must be added there).
    from augure.store.words import FILES

    assert sorted(set(os.listdir(bot.home)) - set(FILES)) == []


async def _crowd(db: Path) -> None:
    """Another chat's long archive: the forget takes long enough for a kill to land in it."""
    store = await Store.open(db)
    try:
        rows = [(f"{OTHER} number {n} " + "filler words " * 10, time.time()) for n in range(40_000)]
        await store.db.write(
            lambda connection: connection.executemany(
                "INSERT INTO archive (chat_id, role, text, created_at) VALUES ('7', 'user', ?, ?)",
                rows,
            )
        )
    finally:
        await store.close()


def _left(db: Path) -> list[int]:
    """How many of the chat's messages, archived messages and turns state.db holds."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return [
            connection.execute(query, (str(OWNER),)).fetchone()[0]
            for query in (
                "SELECT count(*) FROM messages m JOIN conversations c "
                "ON c.id = m.conversation_id WHERE c.chat_id = ?",
                "SELECT count(*) FROM archive WHERE chat_id = ?",
                "SELECT count(*) FROM turns WHERE chat_id = ?",
            )
        ]


async def test_a_kill_during_forget_leaves_all_or_nothing_and_the_next_start_finishes_it(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        db = tmp_path / "state.db"
        await _crowd(db)
        process = await launch(env)
        await hello(telegram)
        llm.script(text(f"Noted: {PHRASE}."))
        telegram.inject_message(OWNER, f"note {PHRASE}")
        await delivered(telegram, f"Noted: {PHRASE}.")
        command = asyncio.create_task(augure("forget", "--chat", str(OWNER), env=env, timeout=90))
        calls = await telegram.wait_for(
            lambda c: c.method == "sendMessage" and "reply_markup" in c.params, timeout=20
        )
        asked = calls[0].response["result"]["message_id"]
        (message,) = [m for m in telegram.messages(OWNER) if m["message_id"] == asked]
        telegram.press_button(OWNER, asked, buttons(message)["Approve"])
        await until(
            db,
            "SELECT 1 FROM settings WHERE value LIKE '%\"approved\"%' OR value LIKE '%\"wiped\"%'",
        )
        process.kill()  # SIGKILL: somewhere in the forget
        await process.wait()

        left = _left(db)
        assert all(left) or not any(left), left  # one transaction: all of it or none

        process = await launch(env)  # the owner approved: the next start finishes it
        code, out, err = await command
        process.terminate()
        await asyncio.wait_for(process.wait(), 10)
        assert code == 0 and "Forgot chat" in out, out + err
        assert _left(db) == [0, 0, 0]
        assert copies(tmp_path, PHRASE) == []


async def test_forget_waits_for_the_chats_running_work_and_says_so(bot: Bot) -> None:
    bot.llm.script(tool("brood", {"note": PHRASE, "background": True}), text("Brooding."))
    bot.telegram.inject_message(OWNER, f"brood over {PHRASE} in the background")
    await delivered(bot.telegram, "Brooding.")
    code, out, _ = await augure("forget", "--chat", str(OWNER), env=environment(bot.home))
    # Forgotten now, the task would write its result back afterwards: not now, and why.
    assert code == 1 and "Not now" in out and "task " in out, out
    assert bot.core is not None
    assert await Archive(bot.core.store.db).search("xylofrond", Window(str(OWNER)), 5)
    assert Slow.done is not None
    Slow.done.set()
