"""Scheduled jobs through the real bot and the real process."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import (
    approval_message,
    augure,
    buttons,
    delivered,
    environment,
    hello,
    is_clock,
    soon,
)
from tests.fakes.openai import FakeOpenAI, text, tool
from tests.fakes.telegram import FakeTelegram

pytestmark = pytest.mark.tools(*test_tools.TEST_TOOLS, reset=test_tools.reset)


def job_requests(llm: FakeOpenAI, prompt: str) -> list[dict[str, object]]:
    return [r for r in llm.requests if r["messages"][-1].get("content") == prompt]


async def test_a_reminder_set_in_chat_fires_in_its_own_context_and_is_delivered(bot: Bot) -> None:
    bot.llm.script(
        tool("schedule", {"action": "create", "run_at": soon(2), "prompt": "Remind: stretch",
                          "id": "stretch"}),
        text("I will remind you."),
        text("Time to stretch!"),
    )  # fmt: skip
    bot.telegram.inject_message(OWNER, "remind me to stretch in 2 seconds")
    await delivered(bot.telegram, "I will remind you.")
    await delivered(bot.telegram, "Time to stretch!")
    (request,) = job_requests(bot.llm, "Remind: stretch")
    # Its own conversation: the system prompt and the job's prompt, nothing of the chat.
    assert [m["role"] for m in request["messages"] if not is_clock(m)] == ["system", "user"]
    last = bot.telegram.messages(OWNER)[-1]
    assert last["text"].startswith("⏰ stretch")
    assert bot.core is not None and await bot.core.scheduler.jobs() == []
    # The job's output was delivered, never fed back as the owner's words.
    bot.llm.script(text("ok"))
    bot.telegram.inject_message(OWNER, "thanks")
    await delivered(bot.telegram, "ok")
    owner_history = [m.get("content") for m in bot.llm.requests[-1]["messages"]]
    assert "Time to stretch!" not in owner_history


async def test_a_job_that_writes_asks_the_owner_first(bot: Bot) -> None:
    assert bot.core is not None
    await hello(bot.telegram)
    await bot.core.scheduler.create(
        prompt="Send the weekly note to kim", chat_id=str(OWNER), run_at=soon(1), job_id="weekly"
    )
    bot.llm.script(tool("send_note", {"to": "kim", "text": "weekly"}), text("Sent to kim."))
    message = await approval_message(bot)
    assert "(job)" in message["text"]
    assert test_tools.outbox(bot.home) == []
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await delivered(bot.telegram, "Sent to kim.")
    assert test_tools.outbox(bot.home) == [{"to": "kim", "text": "weekly"}]
    (record,) = await bot.core.audit.listing(tool="send_note")
    assert record["origin"] == "job"


async def test_jobs_pause_resume_and_status_commands(bot: Bot) -> None:
    assert bot.core is not None
    await bot.core.scheduler.create(
        prompt="daily digest", chat_id=str(OWNER), cron="0 8 * * *", job_id="digest"
    )
    for command, expected in [
        ("/jobs", "digest: cron `0 8 * * *`"),
        ("/pause", "paused"),
        ("/status", "Scheduler: paused, 1 job(s)"),
        ("/resume", "resumed"),
        ("/jobs", "Scheduler: active"),
    ]:
        bot.telegram.inject_message(OWNER, command)
        await delivered(bot.telegram, expected)
    assert not await bot.core.scheduler.paused()


async def test_cli_changes_reach_the_running_bot(bot: Bot) -> None:
    await hello(bot.telegram)
    env = environment(bot.home, {"AUGURE_ALLOWED_USERS": str(OWNER)})
    bot.llm.script(text("CLI job ran."), text("Run-now ran."))
    # Generous margins: a CLI process can take seconds to start on a loaded machine.
    code, out, err = await augure(
        "jobs", "add", "--at", soon(6), "--prompt", "from the cli", "--id", "cli-job", env=env
    )
    assert code == 0, err
    await delivered(bot.telegram, "CLI job ran.", timeout=20)
    code, _, _ = await augure(
        "jobs", "add", "--cron", "0 3 * * *", "--prompt", "nightly", "--id", "nightly", env=env
    )
    code, out, _ = await augure("jobs", "run", "nightly", env=env)
    assert code == 0 and "will run now" in out
    await delivered(bot.telegram, "Run-now ran.")
    code, out, _ = await augure("jobs", "list", env=env)
    assert "nightly: cron `0 3 * * *`" in out and "cli-job" not in out
    code, out, _ = await augure("jobs", "remove", "nightly", env=env)
    assert code == 0
    code, _, err = await augure("jobs", "remove", "nightly", env=env)
    assert code == 1 and "no job 'nightly'" in err
    code, _, err = await augure("jobs", "add", "--cron", "99 * * * *", "--prompt", "x", env=env)
    assert code == 1 and "invalid cron" in err and "Traceback" not in err


async def test_a_job_survives_kill_9_and_fires_exactly_once(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))

        async def launch() -> asyncio.subprocess.Process:
            return await asyncio.create_subprocess_exec(
                sys.executable, "-m", "tests.e2e.launcher", env=env,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip

        process = await launch()
        await hello(telegram)
        due = datetime.now(UTC) + timedelta(seconds=6)
        code, _, err = await augure(
            "jobs", "add", "--at", due.isoformat(timespec="seconds"), "--prompt", "survive",
            "--id", "survivor", env=env,
        )  # fmt: skip
        assert code == 0, err
        process.kill()  # SIGKILL before the job is due
        await process.wait()
        assert datetime.now(UTC) < due, "the machine is too slow for this test's margins"
        # The due time passes while the bot is down.
        await asyncio.sleep((due - datetime.now(UTC)).total_seconds() + 0.5)

        llm.script(text("Survived."))
        process = await launch()
        await delivered(telegram, "Survived.", timeout=20)
        await asyncio.sleep(1.5)  # a second firing would show up here
        assert len(job_requests(llm, "survive")) == 1
        assert sum("Survived." in m["text"] for m in telegram.messages(OWNER)) == 1
        process.terminate()
        await asyncio.wait_for(process.wait(), 10)


async def test_one_job_paused_from_the_cli_shows_in_jobs_and_json_and_resumes(bot: Bot) -> None:
    assert bot.core is not None
    await hello(bot.telegram)
    for job_id in ("digest", "backup"):
        await bot.core.scheduler.create(
            prompt=job_id, chat_id=str(OWNER), cron="0 8 * * *", job_id=job_id
        )
    env = environment(bot.home, {"AUGURE_ALLOWED_USERS": str(OWNER)})
    code, out, err = await augure("jobs", "pause", "digest", env=env)
    assert code == 0 and "Paused job digest" in out, err
    bot.telegram.inject_message(OWNER, "/jobs")
    await delivered(bot.telegram, "Scheduler: active")
    listing = bot.telegram.messages(OWNER)[-1]["text"]
    assert "digest (paused): cron" in listing
    assert "backup: cron" in listing and "backup (paused)" not in listing
    code, out, _ = await augure("jobs", "list", "--json", env=env)
    assert code == 0
    assert {job["id"]: job["paused"] for job in json.loads(out)} == {
        "digest": True,
        "backup": False,
    }
    code, out, _ = await augure("jobs", "resume", "digest", env=env)
    assert code == 0 and "Resumed job digest" in out
    digest = await bot.core.scheduler.get("digest")
    assert digest is not None and not digest.paused
    code, _, err = await augure("jobs", "pause", "nope", env=env)
    assert code == 1
    assert err.strip().splitlines() == ["augure: no job 'nope'; see `augure jobs list`"]


async def test_jobs_run_with_no_bot_says_it_runs_when_the_bot_starts(tmp_path: Path) -> None:
    env = environment(tmp_path, {"AUGURE_ALLOWED_USERS": "1001"})
    code, _, err = await augure("jobs", "add", "--cron", "0 9 * * *", "--prompt", "hi",
                                "--id", "morning", env=env)  # fmt: skip
    assert code == 0, err
    code, out, err = await augure("jobs", "run", "morning", env=env)
    assert code == 0, err
    assert "now" not in out and "when `augure run` starts" in out, out
