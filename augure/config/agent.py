"""`[agent]` and `[memory]`: how a turn runs (loops, tokens, time zone, persona, history) and
where the memory files it reads are kept."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_loops: int = Field(default=10, ge=1, le=100)
    token_budget: int = Field(default=0, ge=0)
    timezone: str | None = None
    persona: str = ""
    # History above this many tokens (estimated) is compacted: old tool results shortened,
    # then older turns summarised by the model.
    history_tokens: int = Field(default=12_000, ge=1_000)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown IANA time zone {value!r}") from None
        return value


class MemoryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Path | None = None
    max_prompt_tokens: int = Field(default=2000, ge=0)
