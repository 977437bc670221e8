"""`[tools.opencode]`: the coding agent `opencode`, which `sandbox_exec` runs in the sandbox."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from augure.tool_settings import settings_for


@settings_for("opencode")
class OpencodeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | list[str] | None = None
    args: str | list[str] = []
