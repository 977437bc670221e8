"""Budget caps through the real bot, the real openai SDK and the scripted endpoint
(docs/reference/spend.md): a cap stops the next call and background work, across a restart;
the owner is warned once and told of the cap once; cached tokens are priced at their rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from augure.scheduler.heartbeat import Beat
from tests.e2e.conftest import OWNER
from tests.e2e.helpers import augure, environment
from tests.e2e.spending import CAPPED, Start, ask, texts, told
from tests.fakes.openai import FakeOpenAI, text


async def test_a_cap_reached_mid_day_stops_the_next_call_and_background_work_across_a_restart(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(CAPPED)
    llm.script(text("First answer.", usage=(10, 5)))  # $0.015: over the $0.01 cap
    await ask(bot, "hello", "First answer.")
    await ask(bot, "and again?", "daily budget of $0.01 is reached")
    assert len(llm.requests) == 1
    (refusal,) = [t for t in texts(bot) if t.startswith("Sorry")]
    assert "raise [budget] daily_usd" in refusal and "\n" not in refusal
    assert "Please try again" not in refusal

    await bot.restart()
    await ask(bot, "after the restart?", "daily budget of $0.01 is reached")
    assert bot.core is not None
    core = bot.core
    (core.config.memory_dir / "heartbeat.md").write_text("- Is the door locked?\n")
    core.heartbeat.settings = core.heartbeat.settings.model_copy(
        update={"active_hours": "00:00-24:00"}
    )
    assert await core.heartbeat.beat() is Beat.OVER_BUDGET
    await core.scheduler.create(prompt="report", chat_id=str(OWNER), cron="0 0 1 1 *", job_id="j")
    assert await core.scheduler.request_run("j", "cli")
    for running in await core.scheduler.tick():
        await running
    # (The scheduler's own loop may take the requested run first: either way, skipped.)
    runs = await core.store.db.fetchall("SELECT status, reply FROM job_runs")
    assert runs and all(r["status"] == "skipped" and "daily budget" in r["reply"] for r in runs)

    assert len(llm.requests) == 1  # nothing after the cap: no chat, no heartbeat, no job
    assert told(bot, "Spend: the daily budget of $0.01 is reached") == 1  # once, not per start
    report = await core.budget.report()
    skipped = {name: t.skipped for name, t in report.today.by_origin.items() if t.skipped}
    assert skipped == {"chat": 2, "heartbeat": 1, "job": len(runs)}


async def test_the_owner_is_warned_once_then_told_of_the_cap_once(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    toml = "[llm]\ninput_price_per_million = 1.0\n[budget]\ndaily_usd = 1.0\n"
    bot = await bot_with_config(toml)
    for n in range(3):  # $0.45 each: 45 %, 90 % (the warning), 135 % (the cap)
        llm.script(text(f"Answer {n}.", usage=(450_000, 0)))
        await ask(bot, f"question {n}", f"Answer {n}.")
    await ask(bot, "one more", "daily budget of $1.00 is reached")
    await ask(bot, "and another", "daily budget of $1.00 is reached")
    assert told(bot, "Spend: $0.9000 of the daily budget of $1.00 (90%)") == 1
    assert told(bot, "Spend: the daily budget") == 1
    assert len(llm.requests) == 3


async def test_cached_tokens_are_priced_at_their_rate_and_shown(
    bot_with_config: Start, llm: FakeOpenAI, tmp_path: Path
) -> None:
    toml = (
        "[llm]\ninput_price_per_million = 1.0\ncached_input_price_per_million = 0.1\n"
        "output_price_per_million = 2.0\n"
    )
    bot = await bot_with_config(toml)
    llm.script(text("Cached.", usage=(1000, 10), cached_tokens=800))
    await ask(bot, "hello", "Cached.")
    await ask(bot, "/usage", "Today (")
    (usage,) = [t for t in texts(bot) if "Today (" in t]
    assert "chat: 1 call(s), 1000 in (800 cached) + 10 out, $0.0003" in usage

    code, out, err = await augure("usage", "--json", env=environment(bot.home))
    assert code == 0, err
    chat = json.loads(out)["today"]["by_origin"]["chat"]
    assert chat["cached_tokens"] == 800 and chat["prompt_tokens"] == 1000
    assert chat["usd"] == pytest.approx((200 * 1.0 + 800 * 0.1 + 10 * 2.0) / 1e6)


async def test_without_a_cap_a_model_without_a_price_is_counted_as_unknown_never_free(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config("")
    llm.script(text("Unpriced.", usage=(1000, 10)), text("Still unpriced.", usage=(1000, 10)))
    await ask(bot, "hello", "Unpriced.")
    await ask(bot, "again", "Still unpriced.")
    code, out, err = await augure("usage", "--json", env=environment(bot.home))
    assert code == 0, err
    today = json.loads(out)["today"]
    assert today["unpriced_calls"] == 2 and today["prompt_tokens"] == 2000
    assert today["usd"] == 0


async def test_a_voice_note_is_not_transcribed_once_a_cap_is_reached(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(CAPPED, AUGURE__LLM__TRANSCRIPTION_MODEL="whisper-1")
    llm.script(text("First answer.", usage=(10, 5)))
    await ask(bot, "hello", "First answer.")
    before = told(bot, "I could not listen to that voice note")
    bot.telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
    await bot.telegram.wait_for(
        lambda c: told(bot, "I could not listen to that voice note") > before, timeout=15
    )
    (refused,) = [t for t in texts(bot) if "could not listen" in t]
    assert "daily budget of $0.01 is reached" in refused
    assert llm.transcriptions == []


SPOKEN = {
    "AUGURE__LLM__TRANSCRIPTION_MODEL": "whisper-1",
    "AUGURE__VOICE__REPLIES": "always",
    "AUGURE__VOICE__TTS_MODEL": "tts-test",
    "AUGURE__VOICE__PRICE_PER_MILLION_CHARACTERS": "15",
}


async def test_speech_is_counted_in_the_spend_by_its_characters(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(
        "[budget]\ndaily_usd = 5.0\n[llm]\ninput_price_per_million = 1.0\n", **SPOKEN
    )
    llm.script(text("It is sunny.", usage=(10, 5)))
    bot.telegram.inject_message(OWNER, "weather?")
    await bot.telegram.wait_for(lambda c: c.method == "sendVoice", timeout=15)
    report = await bot.core.budget.report()
    speech = report.today.by_origin["speech"]
    assert speech.calls == 1 and speech.prompt_tokens == len("It is sunny.")
    assert speech.usd == pytest.approx(len("It is sunny.") * 15 / 1_000_000)


async def test_at_a_cap_the_answer_is_not_spoken_and_arrives_as_text(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(CAPPED, **SPOKEN)
    llm.script(text("First answer.", usage=(10, 5)))
    bot.telegram.inject_message(OWNER, "hello")
    await bot.telegram.wait_for(lambda c: c.method in ("sendMessage", "sendVoice"), timeout=15)
    spoken_before = len(llm.speeches)
    # The first turn's 15 tokens at $1,000 per million reached the $0.01 cap: what is said
    # now is the refusal line, sent as text, with no speech asked for.
    await ask(bot, "and now?", "daily budget of $0.01 is reached")
    assert len(llm.speeches) == spoken_before
