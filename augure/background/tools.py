"""`task_status` and `task_cancel` (docs/reference/execution.md#background-work), built around one
TaskManager."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from augure.background.manager import TaskManager
from augure.store.tasks import TaskRow
from augure.tools.base import RunContext, Tool, ToolResult, tool
from augure.tools.result import relayed_source

EXCERPT = 200  # characters of a result in the listing; `task_status(id)` shows all of it
LISTED = 15

TaskId = Annotated[str, Field(min_length=1, description="the task id")]


def task_tools(manager: TaskManager) -> list[Tool]:
    # A task's result can be outside content: its row keeps the provenance, and what shows
    # it here is marked from that (and what is derived from this, a history summary, too).
    @tool("task_status", deferred=True, relays=True)
    async def task_status(ctx: RunContext, id: TaskId | None = None) -> ToolResult:
        """Background tasks: one in full, or the running and recent ones."""
        if id is not None:
            row = await manager.tasks.get(id.strip())
            if row is None or (ctx.chat_id is not None and row.chat_id != ctx.chat_id):
                return ToolResult.error(f"there is no task {id}")
            source = relayed_source("task_status", _sources(manager, [row]))
            return ToolResult.ok(detail(row), source=source)
        rows = await manager.tasks.list(limit=LISTED, chat_id=ctx.chat_id)
        if not rows:
            return ToolResult.ok("No background tasks.")
        listing = "\n".join(line(row) for row in rows)
        return ToolResult.ok(listing, source=relayed_source("task_status", _sources(manager, rows)))

    @tool("task_cancel", deferred=True, safe=False)
    async def task_cancel(ctx: RunContext, id: TaskId) -> ToolResult:
        """Stop a running background task."""
        row = await manager.tasks.get(id.strip())
        if row is None or (ctx.chat_id is not None and row.chat_id != ctx.chat_id):
            return ToolResult.error(f"there is no task {id}")
        said = await manager.cancel(row.id)
        return ToolResult.ok(said) if said.startswith("Cancelled") else ToolResult.error(said)

    return [task_status, task_cancel]


def _sources(manager: TaskManager, rows: list[TaskRow]) -> set[str]:
    """Where the shown results came from, and the progress lines of running tasks whose
    tool reads outside content (a page's words, a command's output)."""
    found = {row.source for row in rows if row.source is not None and row.result}
    for row in rows:
        outside = manager.progress_source(row.id) if row.progress else None
        if outside is not None:
            found.add(outside)
    return found


def line(row: TaskRow, *, limit: int = EXCERPT) -> str:
    """One task in a listing: id, tool, status, elapsed, and what it has produced so far.
    Unmarked: whoever shows it to the model marks the whole from the rows' `source`."""
    text = f"{row.id} {row.tool} — {row.status}, {elapsed(row.elapsed())}"
    if row.status == "running":
        return f"{text}: {excerpt(row.progress, limit)}" if row.progress else text
    return f"{text}: {excerpt(row.result, limit)}" if row.result else text


def detail(row: TaskRow) -> str:
    parts = [f"Task {row.id}: {row.tool}, {row.status}, {elapsed(row.elapsed())}"]
    if row.progress:
        parts.append(f"Latest progress: {row.progress}")
    if row.result:
        parts.append(f"Result:\n{row.result}")
    return "\n".join(parts)


def elapsed(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m {rest:02d}s" if minutes else f"{rest}s"


def excerpt(text: str | None, limit: int = EXCERPT) -> str:
    """The start of a text on one line."""
    if not text:
        return ""
    short = " ".join(text.split())
    return short if len(short) <= limit else short[: limit - 1] + "…"
