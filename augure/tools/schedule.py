"""The `schedule` tool: reminders and recurring prompts the assistant runs by itself."""

from __future__ import annotations

from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from augure.scheduler.service import JobError, Scheduler
from augure.tools.base import RunContext, ToolResult, tool


@tool(
    "schedule",
    safe=False,
    hint="schedule runs a prompt later (run_at) or repeatedly (5-field cron) and delivers "
    "the answer to this chat; write the prompt as an instruction to yourself.",
)
async def schedule(
    ctx: RunContext,
    action: Literal["create", "delete", "list"],
    id: Annotated[str | None, Field(description="job id (lowercase-words); for delete")] = None,
    cron: Annotated[str | None, Field(description="5 fields: min hour day month weekday")] = None,
    run_at: Annotated[
        str | None, Field(description="ISO 8601; without an offset, the agent's time zone")
    ] = None,
    timezone: Annotated[str | None, Field(description="IANA zone for cron/run_at")] = None,
    prompt: Annotated[str | None, Field(description="what to do when it fires")] = None,
) -> ToolResult:
    """Create, delete or list scheduled jobs (one-shot reminders or cron)."""
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
    try:
        job = await scheduler.create(
            prompt=prompt or "",
            chat_id=ctx.chat_id if ctx.origin == "chat" else None,
            cron=cron,
            run_at=run_at,
            timezone=timezone,
            job_id=id,
        )
    except JobError as exc:
        return ToolResult.error(str(exc))
    return ToolResult.ok(f"Scheduled. {job.describe(ZoneInfo(scheduler.zone))}")
