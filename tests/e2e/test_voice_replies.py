"""Spoken replies (docs/voice.md): speech from the endpoint's /audio/speech, sent with
sendVoice (OGG/Opus, checked by the fake Telegram), the text always arriving whole."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from typing import Any

import pytest

from tests.e2e.conftest import OWNER, Bot
from tests.fakes.audio import is_ogg_opus
from tests.fakes.openai import Reply, text


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {
        "AUGURE__LLM__TRANSCRIPTION_MODEL": "whisper-1",
        "AUGURE__VOICE__REPLIES": "voice_in",
        "AUGURE__VOICE__TTS_MODEL": "tts-test",
        "AUGURE__VOICE__VOICE": "nova",
        "AUGURE__VOICE__PRICE_PER_MILLION_CHARACTERS": "15",
    }


def sent(bot: Bot) -> list[dict[str, Any]]:
    return bot.telegram.messages(OWNER)


async def settled(bot: Bot, method: str, count: int = 1) -> None:
    """Wait for `count` calls of `method`, then a moment for anything sent after them."""
    for _ in range(200):
        if len([c for c in bot.telegram.calls if c.method == method]) >= count:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)


async def test_a_voice_note_is_answered_by_voice_with_the_text(bot: Bot) -> None:
    bot.llm.transcription_text = "what's the weather like"
    bot.llm.script(text("It is **sunny** and 21 °C in Paris."))
    bot.telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
    await settled(bot, "sendVoice")

    (speech,) = bot.llm.speeches
    assert speech["model"] == "tts-test" and speech["voice"] == "nova"
    assert speech["response_format"] == "opus"
    assert speech["input"] == "It is sunny and 21 °C in Paris."  # read aloud without the marks
    (reply,) = sent(bot)  # one message: the voice note, the text as its caption
    assert is_ogg_opus(reply["voice_bytes"])
    assert reply["caption"] == "It is sunny and 21 °C in Paris."
    assert reply["caption_entities"][0]["type"] == "bold"
    # The speech is in the spend ledger, with its cost at the configured price.
    with sqlite3.connect(bot.home / "state.db") as db:
        model, characters, cost = db.execute(
            "SELECT model, prompt_tokens, cost_usd FROM model_calls WHERE origin = 'speech'"
        ).fetchone()
    assert model == "tts-test" and characters == len(speech["input"])
    assert cost == pytest.approx(31 * 15 / 1_000_000)  # 31 characters at $15 per million


async def test_a_text_message_is_answered_without_speech(bot: Bot) -> None:
    bot.llm.script(text("Hello there."))
    bot.telegram.inject_message(OWNER, "hi")
    await settled(bot, "sendMessage")

    assert bot.llm.speeches == []
    (reply,) = sent(bot)
    assert reply["text"] == "Hello there." and "voice" not in reply


async def test_a_failing_synthesis_is_answered_in_text(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    bot.llm.speech_failure = Reply(status=500, error_message="TTS backend crashed: secret detail")
    bot.llm.script(text("The meeting is at 3 pm."))
    with caplog.at_level(logging.WARNING):
        bot.telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
        await settled(bot, "sendMessage")

    (reply,) = sent(bot)
    assert reply["text"] == "The meeting is at 3 pm." and "voice" not in reply
    assert not [c for c in bot.telegram.calls if c.method == "sendVoice"]
    lines = [r.getMessage() for r in caplog.records if "voice reply not spoken" in r.getMessage()]
    assert len(lines) == 1 and "HTTP 500" in lines[0] and "secret detail" not in lines[0]


async def test_a_long_answer_is_spoken_and_its_text_follows_whole(bot: Bot) -> None:
    paragraphs = [f"Paragraph {n}: " + "the plan has many steps. " * 30 for n in range(12)]
    answer = "\n\n".join(paragraphs)  # about 9,000 characters: over a caption, over one request
    bot.llm.script(text(answer))
    bot.telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
    await settled(bot, "sendMessage", 3)

    assert len(bot.llm.speeches) == 3
    assert all(len(s["input"]) <= 4096 for s in bot.llm.speeches)
    assert bot.llm.speeches[0]["input"].startswith("Paragraph 0:")
    messages = sent(bot)
    voices = [m for m in messages if "voice" in m]
    texts = [m["text"] for m in messages if "text" in m]
    assert len(voices) == 3 and all("caption" not in v for v in voices)
    assert messages.index(voices[-1]) < messages.index(next(m for m in messages if "text" in m))
    assert "".join("".join(texts).split()) == "".join(answer.split())  # all of it, in order


@pytest.mark.system_package("opus-tools")
async def test_a_server_that_speaks_only_wav_is_converted_to_ogg_opus(bot: Bot) -> None:
    bot.llm.speech_only = "wav"
    bot.llm.script(text("Converted."))
    bot.telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
    await settled(bot, "sendVoice")

    assert [s["response_format"] for s in bot.llm.speeches] == ["opus"]  # WAV came back
    (reply,) = sent(bot)
    assert is_ogg_opus(reply["voice_bytes"]) and reply["caption"] == "Converted."
