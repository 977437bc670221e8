"""docs/reference/durability.md#after-a-crash through the real app: load, crashes (kill -9), a
corrupt or locked database, and one bot per home."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from augure.core.recovery import INTERRUPTED_NOTE, INTERRUPTED_UNSEEN
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import augure, environment, launch, this_turn, until
from tests.e2e.test_restart import PENDING_SHOWN
from tests.fakes.openai import FakeOpenAI, Reply, text, tool
from tests.fakes.telegram import FakeTelegram
from tests.system import cannot_run
from tests.unit.test_state_layer import hold_lock

CHATS = [OWNER + n for n in range(50)]


def echo(body: dict[str, Any]) -> Reply:
    """The model answers with the words of each owner message it answers (several, when
    follow-ups were folded into one turn): order is visible."""
    return text("echo " + " ".join(this_turn(body)))


def echoed(telegram: FakeTelegram, chat: int) -> list[str]:
    answers = [m["text"] for m in telegram.messages(chat) if m["text"].startswith("echo ")]
    return [word for answer in answers for word in answer.split()[1:]]


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {"AUGURE_ALLOWED_USERS": ",".join(map(str, CHATS))}


async def test_fifty_chats_of_twenty_messages_each_get_every_answer_once_in_order(
    bot: Bot, telegram: FakeTelegram, llm: FakeOpenAI
) -> None:
    llm.responder = echo
    for n in range(20):
        for chat in CHATS:
            telegram.inject_message(chat, f"{chat}-{n}")
    for _ in range(1200):
        if sum(len(echoed(telegram, chat)) for chat in CHATS) >= len(CHATS) * 20:
            break
        await asyncio.sleep(0.1)
    await telegram.wait_idle(quiet=0.5, timeout=10)
    for chat in CHATS:
        # Every message answered once, in order, follow-ups folded or not.
        assert echoed(telegram, chat) == [f"{chat}-{n}" for n in range(20)], chat
    assert not [c for c in telegram.sent("sendMessage") if "went wrong" in c.params["text"]]
    assert bot.core is not None
    assert await bot.core.store.integrity() == "ok"


async def test_a_database_locked_by_another_process_for_8_s_delays_the_answer_only(
    bot: Bot, telegram: FakeTelegram, llm: FakeOpenAI
) -> None:
    llm.script(text("Still here."))
    holder = hold_lock(bot.home / "state.db", 8)
    try:
        telegram.inject_message(OWNER, "are you there?")
        await telegram.wait_for(
            lambda c: c.method == "sendMessage" and c.params.get("text") == "Still here.",
            timeout=30,
        )
    finally:
        holder.wait(15)
    assert [m["text"] for m in telegram.messages(OWNER)] == ["Still here."]


# -- crashes: a real `augure run` process, killed with SIGKILL ----------------------------


# A loaded machine can take many seconds to start a bot and answer what it recovered: the
# helpers below wait for the event itself, this long at most, never for a stretch of quiet.
RECOVERY_SECONDS = 60.0


async def until_true(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + RECOVERY_SECONDS
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.05)


async def new_poll(telegram: FakeTelegram, polls: int) -> None:
    """Wait for a getUpdates from a newly started bot (after `polls` seen before)."""
    await until_true(lambda: len(telegram.polls_started) > polls, "the restarted bot polled")


async def stop(process: asyncio.subprocess.Process) -> None:
    process.terminate()
    await asyncio.wait_for(process.wait(), 10)


def integrity(db: Path) -> str:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])


async def restart_twice(
    env: dict[str, str], telegram: FakeTelegram, *, recovered: str
) -> list[str]:
    """Start after the crash, then once more: returns what each start said, per start. The
    first start is waited for until it has said `recovered` (what the crash left it owing,
    or a part of it), however long a loaded machine takes; then, as for the second start,
    until the chat is quiet, so that anything said twice would show."""
    said = []
    for owed in (recovered, ""):
        before, polls = len(telegram.calls), len(telegram.polls_started)
        process = await launch(env)
        await new_poll(telegram, polls)
        await until_true(
            lambda: owed in spoken(telegram, before),  # noqa: B023 (awaited in this pass)
            f"the restarted bot said {owed!r}",
        )
        await telegram.wait_idle(quiet=0.5, timeout=RECOVERY_SECONDS)
        said.append(spoken(telegram, before))
        await stop(process)
    return said


def spoken(telegram: FakeTelegram, since: int) -> str:
    """The texts the bot sent or edited in since the `since`th call to the fake."""
    return "\n".join(
        str(c.params.get("text"))
        for c in telegram.calls[since:]
        if c.method in ("sendMessage", "editMessageText")
    )


async def crash(
    env: dict[str, str], telegram: FakeTelegram, llm: FakeOpenAI, reply: Reply, said: str, at: str
) -> None:
    """Start the bot, have the owner say `said` to a model answering `reply`, and kill -9 the
    bot once the database shows `at`."""
    process = await launch(env)
    await telegram.wait_polling(timeout=20)
    llm.script(reply)
    telegram.inject_message(OWNER, said)
    await until(Path(env["AUGURE_HOME"]) / "state.db", at)
    process.kill()  # SIGKILL: no chance to clean up
    await process.wait()


async def test_kill_mid_stream_finalises_the_preview_in_place_once(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        words = " ".join(f"word{n}" for n in range(400))
        story = text(words, chunk_size=4, chunk_delay=0.05)
        shown = "SELECT 1 FROM turns WHERE preview_message_id > 0"
        await crash(env, telegram, llm, story, "tell me a long story", shown)
        (preview,) = telegram.messages(OWNER)

        first, second = await restart_twice(env, telegram, recovered=INTERRUPTED_NOTE)
        (finalised,) = telegram.messages(OWNER)
        assert finalised["message_id"] == preview["message_id"]
        assert finalised["text"].startswith("word0 word1")
        assert finalised["text"].endswith(INTERRUPTED_NOTE)
        assert INTERRUPTED_NOTE in first and second == ""
    assert integrity(tmp_path / "state.db") == "ok"


async def test_kill_before_any_preview_tells_the_owner_to_ask_again_once(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        late = text("too late", delay=30)
        running = "SELECT 1 FROM turns WHERE status = 'running'"
        await crash(env, telegram, llm, late, "what time is it?", running)
        first, second = await restart_twice(env, telegram, recovered=INTERRUPTED_UNSEEN)
        assert first == INTERRUPTED_UNSEEN and second == ""
        with contextlib.closing(sqlite3.connect(tmp_path / "state.db")) as connection:
            (stored,) = connection.execute("SELECT content FROM messages").fetchall()
        assert stored == ("what time is it?",)  # stored before the model saw it


async def test_kill_mid_tool_records_it_interrupted_names_it_once_and_never_reruns(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        job = tool("slow_job", {"name": "backup"})
        running = "SELECT 1 FROM invocations WHERE status = 'running'"
        await crash(env, telegram, llm, job, "run the backup job", running)
        first, second = await restart_twice(env, telegram, recovered="interrupted")
        assert "`slow_job`" in first or "slow_job" in first
        assert "interrupted" in first and second == ""
        code, out, _ = await augure("invocations", "--tool", "slow_job", "--json", env=env)
        assert code == 0 and '"status": "interrupted"' in out
    assert test_tools.outbox(tmp_path) == []
    assert integrity(tmp_path / "state.db") == "ok"


async def test_kill_with_an_approval_pending_expires_it_once_and_never_runs(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        note = tool("send_note", {"to": "ivy", "text": "x"})
        await crash(env, telegram, llm, note, "tell ivy", PENDING_SHOWN)
        first, second = await restart_twice(env, telegram, recovered="the assistant restarted")
        assert "the assistant restarted" in first and second == ""
        request = telegram.messages(OWNER)[0]
        assert not request.get("reply_markup")
    assert test_tools.outbox(tmp_path) == []


# -- start-up refusals ----------------------------------------------------------------------


async def test_a_corrupt_database_stops_the_start_with_one_line(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        tmp_path.mkdir(exist_ok=True)
        (tmp_path / "state.db").write_bytes(b"SQLite format 3\x00" + b"\x13" * 8192)
        code, _, err = await augure("run", env=env, timeout=5)
    lines = err.strip().splitlines()
    assert code != 0 and len(lines) == 1, err
    assert str(tmp_path / "state.db") in lines[0] and "restore" in lines[0]
    assert "Traceback" not in err


async def test_a_home_that_cannot_be_written_stops_the_start_with_one_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "file").write_text("not a folder")
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = bot_environment(tmp_path / "file" / "home", telegram, llm)
        code, _, err = await augure("run", env=environment(tmp_path / "file" / "home", env))
    lines = err.strip().splitlines()
    assert code != 0 and len(lines) == 1 and "AUGURE_HOME" in lines[0], err


async def test_a_second_bot_on_the_same_home_is_refused_and_status_reads_the_lock(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        code, out, _ = await augure("status", env=env)
        assert code == 3 and "no bot" in out.lower()
        first = await launch(env)
        await telegram.wait_polling(timeout=20)
        code, _, err = await augure("run", env=env, timeout=10)
        assert code != 0 and f"pid {first.pid}" in err and len(err.strip().splitlines()) == 1
        llm.script(text("Only one of me."))
        telegram.inject_message(OWNER, "hi")
        await telegram.wait_for(lambda c: c.params.get("text") == "Only one of me.", timeout=10)
        code, out, _ = await augure("status", env=env)
        assert code == 0 and f"pid {first.pid}" in out and "last update" in out
        await stop(first)
        code, _, _ = await augure("status", env=env)
        assert code == 3


FULL_DISK = """
set -e
mount -t tmpfs -o size=256k augure-test "$1"
mkdir "$1/home"
dd if=/dev/zero of="$1/filler" bs=4k 2>/dev/null || true
exec "$2" -m augure run
"""


def can_mount_in_a_namespace() -> bool:
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.system_package("util-linux")
async def test_a_full_disk_at_start_is_one_line_and_a_quick_exit(tmp_path: Path) -> None:
    if not can_mount_in_a_namespace():
        reason = "needs user namespaces for unshare (Debian util-linux) to mount a small disk"
        cannot_run(reason)
    disk = tmp_path / "disk"
    disk.mkdir()
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(disk / "home", bot_environment(disk / "home", telegram, llm))
        process = await asyncio.create_subprocess_exec(
            "unshare", "-rm", "sh", "-c", FULL_DISK, "sh", str(disk), sys.executable, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(process.communicate(), 5)
    lines = err.decode().strip().splitlines()
    assert process.returncode not in (0, None) and len(lines) == 1, err
    assert "AUGURE_HOME" in lines[0] and "Traceback" not in err.decode()
