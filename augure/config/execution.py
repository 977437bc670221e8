"""`[sandbox]` and `[code_mode]`: where generated code runs, and the model's snippets that call
tools (docs/sandbox.md; docs/reference/execution.md#code-mode)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SandboxConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["bwrap", "docker", "none"] = "bwrap"
    timeout_seconds: float = Field(default=30.0, gt=0)
    memory_mb: int = Field(default=512, gt=0)
    network: bool = False
    image: str = "python:3.11-slim"


class CodeModeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    timeout_seconds: float = Field(default=30.0, gt=0)
    max_tool_calls: int = Field(default=50, gt=0)
