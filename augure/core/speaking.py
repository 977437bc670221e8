"""An answer spoken as voice notes, its cost kept in the usage table (docs/voice.md)."""

from __future__ import annotations

import logging

from augure.config.voice import VoiceConfig
from augure.llm.client import LLM
from augure.llm.speech import SpeechError, synthesize
from augure.store.state import Store, TurnUsage

log = logging.getLogger(__name__)

# The usage row's breakdown marks speech: the characters spoken and, when the price is known,
# the cost in millionths of a dollar (the breakdown holds integers).
SPOKEN_CHARACTERS = "speech_characters"
SPOKEN_MICRODOLLARS = "speech_microdollars"


async def speak(
    llm: LLM, store: Store, settings: VoiceConfig, chat_id: str, markdown: str
) -> list[bytes] | None:
    """The answer as OGG/Opus voice notes, or None when it could not be spoken: the text then
    goes alone, and the reason is one line of the log."""
    try:
        spoken = await synthesize(llm, settings, markdown)
    except SpeechError as exc:
        log.warning("voice reply not spoken, the text is sent alone: %s", exc)
        return None
    breakdown = {SPOKEN_CHARACTERS: spoken.characters}
    if settings.price_per_million_characters:
        cost = spoken.characters * settings.price_per_million_characters
        breakdown[SPOKEN_MICRODOLLARS] = round(cost)  # per million characters = micro-USD each
    usage = TurnUsage(
        model=settings.tts_model,
        prompt_tokens=spoken.characters,
        completion_tokens=0,
        llm_calls=len(spoken.notes),
        breakdown=breakdown,
    )
    await store.record_usage(chat_id, await store.open_conversation(chat_id), usage)
    return spoken.notes
