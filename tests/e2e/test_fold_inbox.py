"""A message waiting to be folded survives a crash (docs/reference/durability.md#after-a-crash):
a real `augure run` is killed with SIGKILL while a message Telegram already counts delivered
waits in the folder, for the window or behind a running turn; the next start answers it once,
in order, and the start after that answers nothing."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

from augure.core.recovery import INTERRUPTED_UNSEEN
from tests.e2e.conftest import OWNER, bot_environment
from tests.e2e.helpers import environment, launch, this_turn, until
from tests.e2e.test_chat_experience import png
from tests.e2e.test_durability import echo, echoed, restart_twice, stop
from tests.fakes.openai import FakeOpenAI, text
from tests.fakes.telegram import FakeTelegram

WAITING = "SELECT 1 FROM inbox WHERE content = '{}'"


async def confirmed(telegram: FakeTelegram, update_id: int) -> None:
    """Wait until the bot has told Telegram it has the update: a poll answered with it, then
    the next poll (whose offset confirms it) has started. From here Telegram never sends the
    update again."""
    for _ in range(400):
        delivered = [
            n
            for n, call in enumerate(telegram.calls)
            if call.method == "getUpdates"
            and any(u.get("update_id") == update_id for u in call.response.get("result", []))
        ]
        polls = (
            sum(call.method == "getUpdates" for call in telegram.calls[: delivered[0]]) + 1
            if delivered
            else 0
        )
        if delivered and len(telegram.polls_started) > polls:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"update {update_id} was never confirmed")


async def kill(process: asyncio.subprocess.Process) -> None:
    process.kill()  # SIGKILL: no chance to clean up
    await process.wait()


def inbox_rows(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return int(connection.execute("SELECT count(*) FROM inbox").fetchone()[0])


async def test_kill_while_a_message_waits_for_the_window_answers_it_once_after_restart(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        env["AUGURE__TELEGRAM__FOLD_SECONDS"] = "5"
        process = await launch(env)
        await telegram.wait_polling(timeout=20)
        telegram.inject_message(OWNER, "remember")
        await confirmed(telegram, telegram._next_update_id - 1)
        await until(tmp_path / "state.db", WAITING.format("remember"))
        await kill(process)
        assert telegram.messages(OWNER) == [] and llm.requests == []  # not answered before

        llm.responder = echo
        first, second = await restart_twice(env, telegram, recovered="echo remember")
        assert echoed(telegram, OWNER) == ["remember"]  # answered, once
        assert first == "echo remember" and second == ""
        assert len(llm.requests) == 1
        assert inbox_rows(tmp_path / "state.db") == 0


async def test_kill_while_follow_ups_wait_behind_a_running_turn_answers_them_once_in_order(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        env["AUGURE__TELEGRAM__STREAMING"] = "false"
        process = await launch(env)
        await telegram.wait_polling(timeout=20)
        llm.script(text("too late", delay=30))
        telegram.inject_message(OWNER, "first")
        await llm.wait_requests(1, timeout=20)
        telegram.inject_message(OWNER, "second")
        telegram.inject_message(OWNER, "third")
        await confirmed(telegram, telegram._next_update_id - 1)
        await until(tmp_path / "state.db", WAITING.format("third"))
        await kill(process)

        llm.responder = echo
        first, second = await restart_twice(env, telegram, recovered="echo first second third")
        # The turn cut off is reported once; what waited behind it is answered once, in order,
        # by one turn (the model also reads "first", which the cut-off turn never answered).
        assert first == f"{INTERRUPTED_UNSEEN}\necho first second third" and second == ""
        assert len(llm.requests) == 2
        with contextlib.closing(sqlite3.connect(tmp_path / "state.db")) as connection:
            rows = connection.execute("SELECT content FROM messages WHERE role = 'user'")
            assert [row[0] for row in rows] == ["first", "second", "third"]
        assert inbox_rows(tmp_path / "state.db") == 0


async def test_kill_while_an_album_waits_answers_it_after_restart_as_one_message(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        env["AUGURE__TELEGRAM__FOLD_SECONDS"] = "5"
        process = await launch(env)
        await telegram.wait_polling(timeout=20)
        telegram.inject_album(OWNER, [png(4, 3), png(6, 5)], caption="which is cuter?")
        await confirmed(telegram, telegram._next_update_id - 1)
        await until(tmp_path / "state.db", "SELECT 1 WHERE (SELECT count(*) FROM inbox) = 2")
        await kill(process)

        llm.script(text("the second"))
        await restart_twice(env, telegram, recovered="the second")
        (request,) = llm.requests
        (album,) = this_turn(request)  # one user message, both images in it, in order
        assert [part["type"] for part in album] == ["text", "image_url", "text", "image_url"]
        assert "which is cuter?" in album[0]["text"]
        assert [m["text"] for m in telegram.messages(OWNER)] == ["the second"]


async def test_a_clean_stop_that_cuts_the_wait_short_leaves_the_message_for_the_next_start(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        env["AUGURE__TELEGRAM__FOLD_SECONDS"] = "30"  # longer than a stop may take
        process = await launch(env)
        await telegram.wait_polling(timeout=20)
        telegram.inject_message(OWNER, "later")
        await until(tmp_path / "state.db", WAITING.format("later"))
        await stop(process)  # SIGTERM
        assert llm.requests == []

        llm.responder = echo
        first, second = await restart_twice(env, telegram, recovered="echo later")
        assert first == "echo later" and second == ""
