"""`memory_read` and `memory_write`: the owner's long-term notes as markdown files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from augure.approval import canonical
from augure.memory.store import MemoryPathError, MemoryStore
from augure.tools.base import Egress, RunContext, ToolResult, tool

if TYPE_CHECKING:
    from augure.config.settings import Config

# Enough lines to answer a question, few enough not to flood the model's context.
MAX_MATCHES = 50
MAX_LINE_CHARS = 300


def _clean(path: str | None) -> str:
    """One spelling per file: `identity.md/`, `./identity.md`, `a//../identity.md.` and
    `identity.md` are all `identity.md`. Not percent-decoded: files are named literally."""
    if path is None or not path.strip():
        return "*"
    return canonical.path(path.strip(), decode=False).lstrip("/") or "*"


@tool("memory_read", target=lambda p: f"memory_read:path={_clean(p.path)}")
async def memory_read(
    ctx: RunContext,
    path: Annotated[str | None, Field(description="relative to memory/")] = None,
    query: Annotated[str | None, Field(description="words; returns the matching lines")] = None,
) -> ToolResult:
    """Read a memory file, list them all (no path), or search them (query)."""
    if query is not None and query.strip():
        return _search(ctx, query, path if path and path.strip() else None)
    if path is None or not path.strip():
        files = ctx.memory.list()
        if not files:
            return ToolResult.ok("Memory is empty.")
        return ToolResult.ok("\n".join(f"{name} ({size} bytes)" for name, size in files))
    try:
        return ToolResult.ok(ctx.memory.read(path))
    except (MemoryPathError, FileNotFoundError) as exc:
        return ToolResult.error(str(exc))


def _on_checklist(arguments: Any, config: Config) -> Egress:
    """A write landing on the heartbeat checklist asks the owner first. Every heartbeat runs
    that file as the owner's standing instructions, so one prompt injection written there
    unasked would run again at every beat (docs/security.md); other memory files stay
    unasked."""
    checklist = config.memory_dir / config.heartbeat.checklist
    on_it = _lands_on(arguments.path, MemoryStore(config.memory_dir), checklist)
    return Egress.WRITE if on_it else Egress.NONE


def _new_lines(arguments: Any, ctx: RunContext) -> list[str]:
    """The lines a write adds to the file: what a later prompt would newly hold."""
    try:
        kept = set(ctx.memory.read(arguments.path).splitlines())
    except (MemoryPathError, OSError, UnicodeDecodeError):
        kept = set()
    return [line for line in arguments.content.splitlines() if line not in kept]


@tool(
    "memory_write",
    classify=_on_checklist,
    stays=_new_lines,  # after outside content a write asks (docs/security.md)
    target=lambda p: f"memory_write:path={_clean(p.path)}",
    safe=False,  # two writes to one file in one response must not interleave
)
async def memory_write(
    ctx: RunContext,
    path: Annotated[str, Field(description="relative to memory/, e.g. people.md")],
    content: Annotated[str, Field(description="the whole new file")],
) -> ToolResult:
    """Create or replace a markdown memory file; read it first to keep what it holds."""
    try:
        ctx.memory.write(path, content)
    except MemoryPathError as exc:
        return ToolResult.error(str(exc))
    return ToolResult.ok(f"Saved {path} ({len(content.encode())} bytes).")


def _lands_on(path: str, memory: MemoryStore, file: Path) -> bool:
    # Spelled as the file (`./heartbeat.md`, `sub/../heartbeat.md`, `heartbeat.md/`) asks even
    # when the store would refuse that spelling: what the store accepts may change.
    spelled = os.path.normpath(memory.root / path.strip().replace("\\", "/"))
    if spelled == os.path.normpath(file):
        return True
    try:
        return memory.resolve(path).resolve() == file.resolve()  # through a link, too
    except (MemoryPathError, OSError, RuntimeError):  # RuntimeError: a link loop
        return False  # the store cannot place it: the write itself is refused


def _search(ctx: RunContext, query: str, path: str | None) -> ToolResult:
    try:
        found = ctx.memory.search(query, path)
    except (MemoryPathError, FileNotFoundError) as exc:
        return ToolResult.error(str(exc))
    if not found:
        where = path or "memory"
        return ToolResult.ok(f"No line in {where} holds all of: {query.strip()}")
    lines = [f"{name}:{number}: {_shorten(line)}" for name, number, line in found[:MAX_MATCHES]]
    if len(found) > MAX_MATCHES:
        rest = len(found) - MAX_MATCHES
        lines.append(f"[{rest} more matching lines not shown; add words to narrow the query]")
    return ToolResult.ok("\n".join(lines))


def _shorten(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"
