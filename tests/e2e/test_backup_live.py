"""A backup taken while the bot is in the middle of a conversation, restored into a fresh
home, gives the same jobs, memory and history (issue 15's done-when check). Real `augure run`
processes against the fakes; the backup and restore are the real commands."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from tests.e2e.conftest import OWNER, bot_environment
from tests.e2e.helpers import augure, environment
from tests.fakes.openai import FakeOpenAI, text, tool
from tests.fakes.telegram import FakeTelegram

FACT = "Alice is allergic to peanuts."


async def start_bot(env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "augure", "run", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def stop_bot(process: asyncio.subprocess.Process) -> None:
    process.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(process.communicate(), 15)
    assert process.returncode == 0, err.decode()


async def test_backup_during_a_conversation_restores_jobs_memory_and_history(
    tmp_path: Path,
) -> None:
    home, fresh, archive = tmp_path / "home", tmp_path / "fresh", tmp_path / "backup.tar.gz"
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(home, bot_environment(home, telegram, llm))
        bot = await start_bot(env)
        try:
            llm.script(
                tool("memory_write", {"path": "people.md", "content": FACT}),
                text("Noted."),
            )
            telegram.inject_message(OWNER, "Remember: Alice is allergic to peanuts")
            await telegram.wait_for("sendMessage", timeout=30)
            code, _, err = await augure(
                "jobs", "add", "--cron", "0 8 * * *", "--prompt", "morning brief",
                "--id", "morning-brief", env=env,
            )  # fmt: skip
            assert code == 0, err

            # A turn still running (the model takes its time) while the backup is taken.
            llm.script(text("Still thinking, done now.", delay=3))
            before = len(llm.requests)
            telegram.inject_message(OWNER, "What do you know about Alice?")
            await llm.wait_requests(before + 1, timeout=30)
            code, _, err = await augure("backup", str(archive), env=env)
            assert code == 0, err
            await telegram.wait_for("sendMessage", count=2, timeout=30)
        finally:
            await stop_bot(bot)

        code, _, err = await augure("restore", str(archive), env=environment(fresh))
        assert code == 0, err
        restored = environment(fresh, bot_environment(fresh, telegram, llm))
        code, out, err = await augure("jobs", "list", env=restored)
        assert code == 0 and "morning-brief" in out and "0 8 * * *" in out, out + err
        code, out, _ = await augure("memory", "show", "people.md", env=restored)
        assert code == 0 and out == FACT

        # The bot on the restored home carries on the same conversation.
        bot = await start_bot(restored)
        try:
            llm.script(text("Alice: peanuts."))
            sent = len(telegram.sent("sendMessage"))
            telegram.inject_message(OWNER, "Remind me about Alice")
            await telegram.wait_for("sendMessage", count=sent + 1, timeout=30)
        finally:
            await stop_bot(bot)
    contents = [m.get("content") for m in llm.requests[-1]["messages"]]
    assert "Remember: Alice is allergic to peanuts" in contents
    assert FACT in str(llm.requests[-1]["messages"][0]["content"])  # memory in the prompt
