"""`[skills]`: where skills are kept, the hubs they come from, and how many failures retire one
(docs/skills.md, docs/reference/skills.md#hubs)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from augure.common.hubspec import parse_hub


class SkillsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Path | None = None
    hub_url: str | None = None
    hubs: list[str] = []
    max_failures: int = Field(default=3, ge=1)

    @field_validator("hubs")
    @classmethod
    def _hubs(cls, value: list[str]) -> list[str]:
        for entry in value:
            parse_hub(entry)  # a bad entry stops the load with its one-line reason
        return [entry.strip() for entry in value]
