"""`[scheduler]`: how late a missed job may still run (docs/jobs.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SchedulerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    misfire_grace_seconds: int = Field(default=300, ge=0)
