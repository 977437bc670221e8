"""/jobs, /pause and /resume: the scheduled jobs, and stopping and restarting them all."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from augure.channels.telegram.commands.command import Asked, Command


async def on_jobs(asked: Asked) -> None:
    listed = await asked.door.owner.jobs()
    zone = ZoneInfo(listed.zone)
    state = "paused" if listed.paused else "active"
    lines = [f"Scheduler: {state} ({listed.zone})"]
    lines += [f"• {job.describe(zone)}" for job in listed.jobs] or ["No scheduled jobs."]
    await asked.say("\n".join(lines))


async def on_pause(asked: Asked) -> None:
    await asked.door.owner.pause_jobs(True)
    await asked.say("Scheduled jobs paused; chatting still works. /resume restarts them.")


async def on_resume(asked: Asked) -> None:
    await asked.door.owner.pause_jobs(False)
    await asked.say("Scheduled jobs resumed.")


JOBS = Command(
    "jobs",
    menu="Scheduled jobs",
    help="/jobs — scheduled jobs; /pause and /resume stop and restart them",
    handler=on_jobs,
)
PAUSE = Command("pause", menu="Pause scheduled jobs", help=None, handler=on_pause)
RESUME = Command("resume", menu="Resume scheduled jobs", help=None, handler=on_resume)
