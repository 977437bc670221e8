"""/status and /memory: what the assistant is running with, and what it keeps in memory."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from augure.channels.telegram.commands.command import Asked, Command
from augure.scheduler.jobs import local
from augure.tools.limits import describe


async def on_status(asked: Asked) -> None:
    status = await asked.door.running.status()
    hours, rest = divmod(status.uptime_seconds, 3600)
    zone = ZoneInfo(status.zone)
    jobs = status.jobs
    lines = [
        f"Augure {status.version}",
        f"Model: {status.model}",
        f"Uptime: {hours}h {rest // 60}m {rest % 60}s",
        f"Tools: {len(status.tools)} ({', '.join(status.tools)})",
        f"Pending approvals: {status.pending_approvals}",
        f"Scheduler: {'paused' if status.paused else 'active'}, "
        f"{len(jobs)} job(s)"
        + (f", next at {local(jobs[0].next_run, zone)}" if jobs and jobs[0].next_run else ""),
    ]
    # Each limit with today's use (docs/reference/limits.md).
    lines += ["Limits:", *(f"• {describe(use)}" for use in status.limits)] if status.limits else []
    lines += [status.mcp] if status.mcp else []
    if status.fallback is not None:
        used = status.fallback
        when = datetime.fromtimestamp(used.at, zone).strftime("%Y-%m-%d %H:%M")
        lines.append(f"Last fallback: {used.model} answered at {when}: {used.why}")
    await asked.say("\n".join(lines))


async def on_memory(asked: Asked) -> None:
    files = asked.door.reports.memory_files()
    lines = [f"{name} — {size} bytes" for name, size in files] or ["Memory is empty."]
    await asked.say("Memory files:\n" + "\n".join(lines))


STATUS = Command(
    "status",
    menu="Model, uptime and state",
    help="/status — model, uptime and state",
    handler=on_status,
)
MEMORY_FILES = Command(
    "memory",
    menu="Memory files and sizes",
    help=None,  # told on /usage's line
    handler=on_memory,
)
