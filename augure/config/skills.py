"""`[skills]`: where skills are kept, the hub they come from, and how many failures retire one
(docs/skills.md)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class SkillsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Path | None = None
    hub_url: str | None = None
    max_failures: int = Field(default=3, ge=1)
