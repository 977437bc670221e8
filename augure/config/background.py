"""`[background]`: how far work released with `background: true` may go on by itself
(docs/background.md). The settings alone: the task manager is augure/background/."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class BackgroundConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # How many background links one chain may hold: the owner's turn releases the first, and
    # a report turn releases another only below this.
    max_chain: int = Field(default=2, ge=1)
