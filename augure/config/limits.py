"""`[profiles.NAME]`: which callers a tool profile binds and the limits it sets on the tools
matching each glob (docs/reference/limits.md). The settings alone, so that the configuration
never imports what enforces them (augure/tools/limits.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from augure.common.caller import Caller


class ToolLimit(BaseModel):
    """`[profiles.NAME.tools."GLOB"]`: every key is optional; an absent one does not limit."""

    model_config = ConfigDict(extra="forbid")

    per_minute: int | None = Field(default=None, ge=0)
    per_day: int | None = Field(default=None, ge=0)
    cost_per_call: float = Field(default=0.0, ge=0)  # USD
    max_cost_per_day: float | None = Field(default=None, ge=0)  # USD
    # True makes every matching call ask the owner; false never removes approval.
    requires_approval: bool = False


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    origins: list[str] = ["*"]
    tools: dict[str, ToolLimit] = {}

    def binds(self, caller: Caller) -> bool:
        """Any link of the caller's chain matching any of `origins` (docs/reference/limits.md)."""
        return caller.binds(self.origins)
