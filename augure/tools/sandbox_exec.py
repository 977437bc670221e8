"""`sandbox_exec`: shell commands run in the chat's sandbox; `opencode` (tools/opencode.py)
runs its coding agent through the same `run_in_sandbox`.

Both are high risk: every call asks the owner unless a rule covers it. Files persist in the
chat's workspace (`$AUGURE_HOME/workspaces/<chat>`) from one call to the next.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from augure.approval.rules import literal
from augure.config.settings import Config
from augure.sandbox import open_sandbox, sandbox_problem
from augure.tools.base import RunContext, ToolResult, tool

if TYPE_CHECKING:
    from augure.sandbox.base import ExecResult

# The sandbox enforces its own wall clock; this only keeps the executor from cutting first.
TOOL_TIMEOUT = 24 * 3600.0
WILDCARDS = ("*", "?", "\n")


def _command(arguments: Any) -> str:
    return str(arguments.command).strip()


def _exec_rule(arguments: Any) -> str | None:
    # Rules know only `*` and `?` as wildcards and have no escape: a command containing
    # either cannot be allowed exactly, so it gets no "Always allow" at all.
    command = _command(arguments)
    if any(c in command for c in WILDCARDS):
        return None
    return f"sandbox_exec:argv={literal(command)}"  # a backslash stays a backslash


def sandbox_timeout(config: Config, asked: float | None) -> float:
    limit = config.sandbox.timeout_seconds
    return limit if asked is None or asked <= 0 else min(asked, limit)


def report(result: ExecResult, timeout: float) -> ToolResult:
    """Exit code and both streams, saying plainly when something was cut or killed."""
    lines = [f"exit code: {result.exit_code}"]
    if result.timed_out:
        lines.append(f"[killed: did not finish within {timeout:g} s]")
    if result.truncated:
        lines.append("[output cut: only the first 64 KiB of each stream were kept]")
    if result.stdout:
        lines.append(f"stdout:\n{result.stdout.rstrip()}")
    if result.stderr:
        lines.append(f"stderr:\n{result.stderr.rstrip()}")
    if not result.stdout and not result.stderr:
        lines.append("(no output)")
    text = "\n".join(lines)
    return ToolResult.ok(text) if result.exit_code == 0 else ToolResult.error(text)


async def run_in_sandbox(
    ctx: RunContext,
    source: str,
    argv: list[str],
    timeout: float,
    ro_files: list[Path] | None = None,
) -> ToolResult:
    problem = sandbox_problem(ctx.config)
    if problem is not None:
        return ToolResult.error(f"[NOT CONFIGURED] {problem}")
    # The backends load with the first command, not the bot's start (docs/performance.md).
    from augure.sandbox.base import SandboxError, workspace_for

    try:
        sandbox = open_sandbox(ctx.config)
        workspace = workspace_for(ctx.home, ctx.chat_id, sandbox)
        result = await sandbox.run(
            argv,
            workspace=workspace,
            timeout=timeout,
            ro_files=ro_files or [],
            inbox=_inbox(ctx.config.inbox_dir(ctx.chat_id), workspace),
            on_line=ctx.progress,
        )
    except SandboxError as exc:
        return ToolResult.error(f"sandbox unavailable: {exc}")
    reported = report(result, timeout)
    if ctx.config.sandbox.network:
        # With network, what the command printed may be any server's answer: outside content,
        # marked as such for the model like a fetched page (docs/security.md).
        reported.source = source
    return reported


def _inbox(inbox: Path, workspace: Path) -> Path | None:
    """The chat's own documents folder (a guest's chat never sees the owner's), to show
    read-only at `inbox/` in the workspace; None before the first document, or when the chat
    keeps something else under that name (the mount would fail)."""
    mount_point = workspace / "inbox"
    if mount_point.is_symlink() or (mount_point.exists() and not mount_point.is_dir()):
        return None
    return inbox if inbox.is_dir() and not inbox.is_symlink() else None


@tool(
    "sandbox_exec",
    risk="high",
    deferred=True,  # rarely needed: its schema is sent once the model loads it
    check=sandbox_problem,
    target=lambda p: f"sandbox_exec:argv={_command(p)}",
    rule=_exec_rule,
    timeout=TOOL_TIMEOUT,
    mode="stateful",  # its latest output line is its progress
    background=True,
    # With `[sandbox] network` on its output may be any server's answer: a history summary
    # of it stays marked (the result itself carries its source, see `run_in_sandbox`).
    relays=True,
)
async def sandbox_exec(
    ctx: RunContext,
    command: Annotated[
        str, Field(min_length=1, description="shell command, run with /bin/sh -c in /workspace")
    ],
    timeout: Annotated[
        float | None, Field(description="seconds; at most the owner's [sandbox] timeout")
    ] = None,
) -> ToolResult:
    """Run shell commands in the chat's isolated Linux sandbox. Its /workspace persists per
    chat, the documents sent in this chat are read-only in inbox/, and there is no network
    unless the owner enabled it."""
    if not command.strip():
        return ToolResult.error("command is empty")
    limit = sandbox_timeout(ctx.config, timeout)
    return await run_in_sandbox(ctx, "sandbox_exec", ["/bin/sh", "-c", command], limit)
