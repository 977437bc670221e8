"""`[voice]`: whether answers are also spoken, and with which model and voice
(docs/voice.md). The settings alone: the speech client is augure/llm/speech.py."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Replies = Literal["off", "voice_in", "always"]


class VoiceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    replies: Replies = "off"
    tts_model: str = Field(default="tts-1", min_length=1)
    voice: str = Field(default="alloy", min_length=1)
    # USD per million characters spoken (tts-1: 15); 0 = unknown, and the cost is not counted.
    price_per_million_characters: float = Field(default=0.0, ge=0)

    def speaks(self, spoken_in: bool) -> bool:
        """Whether an answer is spoken: always, or when what it answers was a voice note."""
        return self.replies == "always" or (self.replies == "voice_in" and spoken_in)
