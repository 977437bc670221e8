"""Approvals across processes: a crash while a request waits, and a decision from the CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import approval_message, augure, buttons, environment, launch, until
from tests.fakes.openai import FakeOpenAI, text, tool
from tests.fakes.telegram import FakeTelegram

PENDING_SHOWN = (
    "SELECT 1 FROM invocations WHERE approval_status = 'pending' AND approval_ref NOT NULL"
)


async def test_a_request_pending_at_a_crash_is_rejected_on_restart_and_never_runs(
    tmp_path: Path,
) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        process = await launch(env)
        llm.script(tool("send_note", {"to": "ivy", "text": "x"}))
        telegram.inject_message(OWNER, "tell ivy")
        calls = await telegram.wait_for(
            lambda c: c.method == "sendMessage" and "reply_markup" in c.params, timeout=20
        )
        message_id = calls[0].response["result"]["message_id"]
        await until(tmp_path / "state.db", PENDING_SHOWN)
        process.kill()  # SIGKILL: no chance to clean up
        await process.wait()

        process = await launch(env)
        await telegram.wait_for(
            lambda c: c.method == "editMessageText" and c.params["message_id"] == message_id,
            timeout=20,
        )
        message = next(m for m in telegram.messages(OWNER) if m["message_id"] == message_id)
        assert "the assistant restarted" in message["text"] and not message.get("reply_markup")

        process.terminate()
        await asyncio.wait_for(process.wait(), 10)
    assert test_tools.outbox(tmp_path) == []
    code, out, _ = await augure("invocations", "--tool", "send_note", "--json", env=env)
    assert code == 0 and '"approval_status": "rejected"' in out


async def test_cli_approval_reaches_the_running_bot(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    test_tools.reset()
    bot = Bot(tmp_path / "home", telegram, llm, monkeypatch, extra_tools=test_tools.TEST_TOOLS)
    await bot.start()
    try:
        llm.script(tool("send_note", {"to": "jo", "text": "x"}), text("Sent via the CLI."))
        telegram.inject_message(OWNER, "tell jo")
        message = await approval_message(bot)
        assert bot.core is not None
        (pending,) = await bot.core.audit.listing(approval_status="pending")

        code, out, _ = await augure("approve", pending["id"], env=environment(bot.home))
        assert code == 0 and out.strip() == f"Approved {pending['id']} (send_note)."
        await telegram.wait_for(
            lambda c: c.method == "sendMessage" and c.params.get("text") == "Sent via the CLI.",
            timeout=3,
        )
        assert test_tools.outbox(bot.home) == [{"to": "jo", "text": "x"}]
        edited = telegram.messages(OWNER)[0]
        assert "Approved" in edited["text"] and not edited.get("reply_markup")
        assert buttons(message)  # it had buttons before the decision
        record = await bot.core.audit.get(pending["id"])
        assert record is not None and record["decided_by"] == "cli"
    finally:
        await bot.stop()
