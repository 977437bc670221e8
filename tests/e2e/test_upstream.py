"""Upstream faults (SPEC §13): the model endpoint answering a web page instead of JSON, a stream
cut off half-way, and the Bot API going down and coming back."""

from __future__ import annotations

import logging

import pytest

from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import delivered
from tests.fakes.openai import Reply, html, text

TRIES = 3  # conftest sets AUGURE__LLM__MAX_RETRIES=2: the first try and two retries


@pytest.fixture(params=["true", "false"], ids=["streaming", "plain"])
def bot_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """Both paths of agent/llm.py: the streamed completion and the plain one."""
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
