"""An answer spoken as voice notes, its cost counted in the spend (docs/voice.md)."""

from __future__ import annotations

import logging

from augure.config.voice import VoiceConfig
from augure.core.spend import SpendCaps
from augure.llm.client import LLM
from augure.llm.spend import SPEECH, BudgetReached

log = logging.getLogger(__name__)


async def speak(
    llm: LLM, budget: SpendCaps, settings: VoiceConfig, markdown: str
) -> list[bytes] | None:
    """The answer as OGG/Opus voice notes, or None when it is not spoken: the text then goes
    alone, and the reason is one line of the log. A reached spending cap is such a reason,
    checked before the speech is asked for, like any model call."""
    price = settings.price_per_million_characters
    unpriced = None if price else "[voice] price_per_million_characters"
    try:
        await budget.check(SPEECH, settings.tts_model, unpriced)
    except BudgetReached as exc:
        log.info("voice reply not spoken, the text is sent alone: %s", exc)
        return None
    # Speech loads with the first spoken reply, not the bot's start (docs/performance.md).
    from augure.llm.speech import SpeechError, synthesize

    try:
        spoken = await synthesize(llm, settings, markdown)
    except SpeechError as exc:
        log.warning("voice reply not spoken, the text is sent alone: %s", exc)
        return None
    cost = spoken.characters * price / 1_000_000 if price else None
    await budget.record_speech(settings.tts_model, spoken.characters, cost)
    return spoken.notes
