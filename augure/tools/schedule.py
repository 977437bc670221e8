"""The `schedule` tool: reminders and recurring prompts the assistant runs by itself."""

from __future__ import annotations

from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from augure.scheduler.jobs import JobError
from augure.scheduler.runner import Scheduler
from augure.tools.base import RunContext, ToolResult, tool


@tool("schedule", safe=False)
async def schedule(
    ctx: RunContext,
    action: Literal["create", "delete", "list"],
    id: Annotated[str | None, Field(description="job id, for delete")] = None,
    cron: Annotated[str | None, Field(description="min hour day month weekday")] = None,
    run_at: Annotated[str | None, Field(description="ISO 8601; no offset: agent's zone")] = None,
    timezone: str | None = None,
    prompt: Annotated[str | None, Field(description="an instruction to yourself")] = None,
) -> ToolResult:
    """Jobs that run a prompt once (run_at) or repeatedly (cron), answering in this chat."""
    scheduler = ctx.scheduler
    if not isinstance(scheduler, Scheduler):
        return ToolResult.error("the scheduler is not running")
    if action == "list":
        jobs = await scheduler.jobs()
        zone = ZoneInfo(scheduler.zone)
        return ToolResult.ok("\n".join(j.describe(zone) for j in jobs) or "No scheduled jobs.")
    if action == "delete":
        if not id:
            return ToolResult.error("delete needs the job id")
        try:
            removed = await scheduler.remove(id)
        except JobError as exc:
            return ToolResult.error(str(exc))
        return (
            ToolResult.ok(f"Deleted job {id}.") if removed else ToolResult.error(f"no job {id!r}")
        )
    # Made after outside content, the job carries it: its runs start from the same sources
    # (docs/security.md, "No deferred leak").
    reading = ctx.caller.reading
    sources = sorted(reading.sources) if reading is not None and reading.tainted else []
    try:
        job = await scheduler.create(
            prompt=prompt or "",
            chat_id=ctx.chat_id if ctx.caller.started_by == "chat" else None,
            cron=cron,
            run_at=run_at,
            timezone=timezone,
            job_id=id,
            sources=sources,
        )
    except JobError as exc:
        return ToolResult.error(str(exc))
    return ToolResult.ok(f"Scheduled. {job.describe(ZoneInfo(scheduler.zone))}")
