"""`opencode`: a coding agent run in the chat's sandbox workspace, and its `[tools.opencode]`
section."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from augure.config.settings import Config
from augure.config.tools import settings_for
from augure.sandbox import sandbox_problem
from augure.tools.base import RunContext, ToolResult, tool
from augure.tools.sandbox_exec import TOOL_TIMEOUT, run_in_sandbox, sandbox_timeout


@settings_for("opencode")
class OpencodeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | list[str] | None = None
    args: str | list[str] = []


def opencode_problem(config: Config) -> str | None:
    if not _opencode_command(config):
        return "set [tools.opencode] command"
    return sandbox_problem(config)


def _opencode_settings(config: Config) -> OpencodeSettings:
    return OpencodeSettings.model_validate(config.tools.section("opencode"))


def _opencode_command(config: Config) -> list[str]:
    command = _opencode_settings(config).command
    if isinstance(command, list):
        return command
    return shlex.split(command) if command and command.strip() else []


def _opencode_args(config: Config) -> list[str]:
    args = _opencode_settings(config).args
    return shlex.split(args) if isinstance(args, str) else args


@tool(
    "opencode",
    risk="high",
    deferred=True,
    check=opencode_problem,
    target=lambda p: f"opencode:task={str(p.task).strip()}",
    # A coding agent's actions are unbounded whatever the task's wording: always ask.
    rule=lambda p: None,
    timeout=TOOL_TIMEOUT,
    mode="stateful",
    background=True,
    relays=True,  # as sandbox_exec: it may pass on what it fetched
)
async def opencode(
    ctx: RunContext,
    task: Annotated[str, Field(min_length=1, description="what the coding agent should do")],
    timeout: Annotated[
        float | None, Field(description="seconds; at most the owner's [sandbox] timeout")
    ] = None,
) -> ToolResult:
    """A coding agent working in the chat's sandbox workspace."""
    command = _opencode_command(ctx.config)
    if not command:
        return ToolResult.error("[NOT CONFIGURED] set [tools.opencode] command")
    shown = _outside_usr(command[0])
    # Bound at its real path, so a symlinked install runs by that path inside.
    program = str(shown[0]) if shown else command[0]
    argv = [program, *command[1:], *_opencode_args(ctx.config), task]
    return await run_in_sandbox(ctx, "opencode", argv, sandbox_timeout(ctx.config, timeout), shown)


def _outside_usr(program: str) -> list[Path]:
    """The agent's binary when installed outside /usr (e.g. ~/.opencode/bin), shown alone.

    Only the file itself: its folder could be a home directory full of secrets.
    """
    if not os.path.isabs(program):
        return []
    path = Path(os.path.realpath(program))
    if path.is_relative_to("/usr") or not path.is_file():
        return []
    return [path]
