"""The jobs as stored: a 5-field cron or a one-shot instant (UTC) beside its IANA zone, and
their fire times (augure.scheduler.crontab reads the cron; APScheduler does the arithmetic)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger

from augure.common.errors import NotDone
from augure.scheduler import crontab

JOB_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TICK = timedelta(microseconds=1)  # "strictly after": triggers return times at or after `now`
MAX_COALESCE_STEPS = 100_000
# The columns a `Job` is read from, in its fields' order.
JOB_COLUMNS = (
    "id, cron, run_at, timezone, prompt, chat_id, next_run, last_run, last_outcome, paused"
)


# (conversation key, prompt, origin chain, sources) → reply text. The chain is `job`, or
# `cli>job` and `dashboard>job` for a run the owner asked for there; the sources are what the
# turn that made the job had read, so the run starts from them (docs/security.md, "Who
# asked", "No deferred leak").
RunTurn = Callable[[str, str, tuple[str, ...], tuple[str, ...]], Awaitable[str]]
RunSkill = Callable[[str, tuple[str, ...]], Awaitable[str]]  # (skill id, chain) → its output
SKILL_JOB_PREFIX = "skill:"  # a skill's job id; the colon keeps it apart from owners' job ids


class JobError(NotDone):
    """A job that cannot be created as asked; the message is fit for the owner."""


def refuse_skill(job_id: str) -> None:
    """A skill's schedule belongs to the skill: changing it as a job would bypass
    manage_skill's approval."""
    if job_id.startswith(SKILL_JOB_PREFIX):
        raise JobError(
            f"{job_id} is a skill's schedule: pause or delete the skill instead "
            "(manage_skill, /skills, augure skills)"
        )


@dataclass(frozen=True)
class Job:
    id: str
    cron: str | None
    run_at: str | None
    timezone: str
    prompt: str
    chat_id: str
    next_run: str | None
    last_run: str | None
    last_outcome: str | None
    paused: bool = False  # its runs are skipped, its schedule kept

    @classmethod
    def from_row(cls, row: sqlite3.Row | tuple[object, ...]) -> Job:
        """A row of `JOB_COLUMNS`."""
        values: tuple[Any, ...] = tuple(row)
        return cls(
            id=values[0],
            cron=values[1],
            run_at=values[2],
            timezone=values[3],
            prompt=values[4],
            chat_id=values[5],
            next_run=values[6],
            last_run=values[7],
            last_outcome=values[8],
            paused=bool(values[9]),
        )

    def describe(self, zone: ZoneInfo) -> str:
        when = f"cron `{self.cron}` ({self.timezone})" if self.cron else f"once ({self.timezone})"
        next_run = local(self.next_run, zone) if self.next_run else "none"
        last = f"{local(self.last_run, zone)} {self.last_outcome}" if self.last_run else "never"
        state = " (paused)" if self.paused else ""
        return f"{self.id}{state}: {when}; next {next_run}; last {last}; prompt: {self.prompt[:80]}"

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "cron": self.cron,
            "run_at": self.run_at,
            "timezone": self.timezone,
            "prompt": self.prompt,
            "chat_id": self.chat_id,
            "next_run": self.next_run,
            "last_run": self.last_run,
            "last_outcome": self.last_outcome,
            "paused": self.paused,
        }


def local(instant: str, zone: ZoneInfo) -> str:
    return datetime.fromisoformat(instant).astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")


def cron_trigger(expression: str, zone: str) -> BaseTrigger:
    try:
        return crontab.trigger(expression, ZoneInfo(zone))
    except crontab.CrontabError as exc:
        raise JobError(f"invalid cron {expression!r}: {exc}") from None


def parse_run_at(text: str, zone: str, now: datetime) -> datetime:
    """ISO 8601; without an offset it is read in `zone`. Must be in the future."""
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        raise JobError(f"run_at {text!r} is not ISO 8601 (e.g. 2026-12-24T18:00)") from None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=ZoneInfo(zone))
    if instant <= now:
        raise JobError(f"run_at {text} is in the past")
    return instant.astimezone(UTC)


def latest_fire(job: Job, first_due: datetime, now: datetime) -> datetime:
    """The last fire time at or before `now`: missed runs of a recurring job coalesce to it."""
    if not job.cron:
        return first_due
    trigger = cron_trigger(job.cron, job.timezone)
    latest = first_due
    for _ in range(MAX_COALESCE_STEPS):
        following = trigger.get_next_fire_time(latest, latest + TICK)
        if following is None or following > now:
            break
        latest = following
    return latest.astimezone(UTC)


def realign_cron_jobs(connection: sqlite3.Connection, now: datetime) -> list[tuple[Job, JobError]]:
    """Recompute each cron job's next run from its expression, as the owner wrote it; returns
    the jobs stopped now, with why: an expression no longer allowed (earlier versions took
    APScheduler's own words, such as `last`) never fires, and the owner is told once."""
    stopped = []
    rows = connection.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE cron IS NOT NULL")
    for job in map(Job.from_row, rows.fetchall()):
        try:
            next_run = realigned_next_run(job, now)
        except JobError as exc:
            if job.next_run is not None:
                stopped.append((job, exc))
            next_run = None
        if next_run != job.next_run:
            connection.execute("UPDATE jobs SET next_run = ? WHERE id = ?", (next_run, job.id))
    return stopped


def realigned_next_run(job: Job, now: datetime) -> str | None:
    """A cron job's next run as its expression reads now (docs/jobs.md): earlier versions
    stored next runs on the wrong weekdays.

    It is the first fire at or after the stored run when that is past (a run missed while the
    bot was down stays due, for the misfire rule), else the first after `now`. Every path that
    sets a next run computes one of these, so a next run this version stored is kept as is."""
    assert job.cron
    start = now + TICK
    if job.next_run is not None:
        start = min(start, datetime.fromisoformat(job.next_run))
    upcoming = cron_trigger(job.cron, job.timezone).get_next_fire_time(None, start)
    return upcoming.astimezone(UTC).isoformat() if upcoming else None


def next_fire(job: Job, now: datetime) -> str | None:
    """The job's first run strictly after `now`; a one-shot has none once its time is past."""
    if job.cron:
        upcoming = cron_trigger(job.cron, job.timezone).get_next_fire_time(None, now + TICK)
        return upcoming.astimezone(UTC).isoformat() if upcoming else None
    if job.next_run and datetime.fromisoformat(job.next_run) > now:
        return job.next_run
    return None
