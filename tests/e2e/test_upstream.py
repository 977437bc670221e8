"""Upstream faults (docs/reference/durability.md#outages): the model endpoint answering a web page
instead of JSON, a stream cut off half-way, and the Bot API going down and coming back."""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import augure, delivered, environment
from tests.fakes.openai import FakeOpenAI, Reply, error, html, text
from tests.fakes.telegram import FakeTelegram

# Long enough for python-telegram-bot's own backoff (1 s, x1.5 per failure) to reach 25 s.
OUTAGE_SECONDS = 45
TRIES = 3  # conftest sets AUGURE__LLM__MAX_RETRIES=2: the first try and two retries


@pytest.fixture(params=["true", "false"], ids=["streaming", "plain"])
def bot_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """Both paths of llm/client.py: the streamed completion and the plain one."""
    return {"AUGURE__TELEGRAM__STREAMING": request.param}


def owner_texts(bot: Bot) -> list[str]:
    return [m["text"] for m in bot.telegram.messages(OWNER)]


async def test_an_html_page_instead_of_json_is_retried_like_a_5xx(bot: Bot) -> None:
    bot.llm.script(html(200), html(502), text("Hello after all."))
    bot.telegram.inject_message(OWNER, "hi")
    await delivered(bot.telegram, "Hello after all.")
    await bot.telegram.wait_idle(quiet=0.3)
    assert owner_texts(bot) == ["Hello after all."]
    assert len(bot.llm.requests) == TRIES


async def test_html_on_every_try_gives_one_clear_message_and_one_log_line(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    bot.llm.script(html(200), html(502), html(200))
    bot.telegram.inject_message(OWNER, "hi")
    await delivered(bot.telegram, "not JSON")
    await bot.telegram.wait_idle(quiet=0.3)
    (message,) = owner_texts(bot)
    assert "invalid response (not JSON)" in message and f"tried {TRIES} times" in message
    assert "<html" not in message
    assert len(bot.llm.requests) == TRIES
    logged = [r for r in caplog.records if "not JSON" in r.getMessage()]
    assert len(logged) == 1 and logged[0].levelno == logging.WARNING


@pytest.mark.parametrize("bot_env", [{"AUGURE__TELEGRAM__STREAMING": "true"}], ids=["streaming"])
async def test_a_streamed_answer_cut_off_half_way_gets_a_clear_message(bot: Bot) -> None:
    bot.llm.script(Reply(text="A long answer that never ends " * 4, chunk_size=8, cut_after=3))
    bot.telegram.inject_message(OWNER, "tell me a story")
    await delivered(bot.telegram, "cut off")
    await bot.telegram.wait_idle(quiet=0.3)
    assert "Something went wrong on my side" not in " ".join(owner_texts(bot))


async def test_augure_run_keeps_a_log_without_the_token_across_a_restart(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        secrets = (telegram.token, env["OPENAI_API_KEY"])
        for run in (1, 2):
            with open(tmp_path / f"stderr-{run}.txt", "wb") as stderr:
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "augure", "-v", "run", env=env,
                    stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
                )  # fmt: skip
                try:
                    llm.script(text(f"Answer {run}."), error(500), error(500), error(500))
                    telegram.inject_message(OWNER, "hi")
                    await delivered(telegram, f"Answer {run}.", timeout=30)
                    telegram.inject_message(OWNER, "and now?")  # the model fails this time
                    await telegram.wait_for(
                        lambda c: "could not get an answer" in str(c.params.get("text")),
                        count=run, timeout=20,
                    )  # fmt: skip
                finally:
                    process.terminate()
                    await asyncio.wait_for(process.wait(), 15)

        log_file = tmp_path / "logs" / "augure.log"
        kept = log_file.read_text()
        assert kept.count("Augure is running") == 2  # both runs, one file
        assert "LLM call failed" in kept
        for name in ("stderr-1.txt", "stderr-2.txt"):
            assert "Augure is running" in (tmp_path / name).read_text()
        for path in [log_file, tmp_path / "stderr-1.txt", tmp_path / "stderr-2.txt"]:
            for secret in secrets:
                assert secret not in path.read_text(), path.name


async def test_a_rejected_token_is_one_line_without_the_token(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        wrong = "999999:WRONG-token-never-valid"
        code, _, err = await augure("run", env=env | {"TELEGRAM_BOT_TOKEN": wrong})
        assert code == 1
        assert err.strip().splitlines()[-1] == (
            "augure: Telegram rejected the bot token (401): "
            "fix the environment variable TELEGRAM_BOT_TOKEN"
        )
        assert wrong not in err and "WRONG-token" not in err

        down = telegram.root
        await telegram.outage("refuse")
        code, _, err = await augure("run", env=env)
        assert code == 1
        assert err.strip().splitlines()[-1] == (
            f"augure: cannot reach the Bot API at {down}; "
            "check the environment variable AUGURE_TELEGRAM_API_URL and the network"
        )
        assert telegram.token not in err

        # Through a proxy that answers nothing: the line names the proxy setting too.
        closed = "http://127.0.0.1:9"  # the discard port: nothing listens there
        code, _, err = await augure("run", env=env | {"AUGURE__TELEGRAM__PROXY": closed})
        assert code == 1
        assert err.strip().splitlines()[-1] == (
            f"augure: cannot reach the Bot API at {down}; check the environment variable "
            "AUGURE_TELEGRAM_API_URL and the proxy ([telegram] proxy) and the network"
        )


async def test_updates_flow_again_soon_after_a_long_bot_api_outage(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most of a minute without the Bot API (refused connections, then a proxy's 502 pages); it
    comes back just after the bot's last failed attempt: the worst moment for a backoff."""
    bot = await Bot(tmp_path / "home", telegram, llm, monkeypatch).start()
    try:
        llm.script(text("Before."), text("After."))
        telegram.inject_message(OWNER, "hi")
        await delivered(telegram, "Before.")
        began = time.monotonic()
        await telegram.outage("refuse")
        await asyncio.sleep(OUTAGE_SECONDS / 3)
        await telegram.outage("502")
        await telegram.wait_for(
            lambda c: c.method == "getUpdates" and c.at >= began + OUTAGE_SECONDS,
            failed=True, timeout=OUTAGE_SECONDS + 30,
        )  # fmt: skip
        await telegram.recover()
        telegram.inject_message(OWNER, "are you back?")
        # docs/reference/durability.md#outages asks for 15 s; the deadline leaves room for a slow
        # machine.
        await delivered(telegram, "After.", timeout=20)
    finally:
        await bot.stop()
