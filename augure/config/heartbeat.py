"""`[heartbeat]`: when the proactive check runs and which checklist it reads
(docs/reference/personas.md#heartbeat). The settings alone, so that the configuration never
imports the heartbeat that runs."""

from __future__ import annotations

import re
from datetime import time

from pydantic import BaseModel, ConfigDict, Field, field_validator

_HOURS = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")


class HeartbeatConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    interval_minutes: float = Field(default=30.0, gt=0)
    # "HH:MM-HH:MM" in the agent timezone; may wrap past midnight ("22:00-06:00").
    active_hours: str = "08:00-22:00"
    checklist: str = "heartbeat.md"  # under the memory folder

    @field_validator("active_hours")
    @classmethod
    def _valid_hours(cls, value: str) -> str:
        active_window(value)
        return value


def active_window(text: str) -> tuple[time, time]:
    match = _HOURS.match(text)
    if match is None:
        raise ValueError(f"active_hours must look like 08:00-22:00, not {text!r}")
    h1, m1, h2, m2 = (int(part) for part in match.groups())
    if h1 > 23 or h2 > 24 or max(m1, m2) > 59 or (h2 == 24 and m2):  # 24:00 ends a day
        raise ValueError(f"active_hours has an hour that does not exist: {text!r}")
    end = time.max if h2 == 24 else time(h2, m2)
    return time(h1, m1), end
