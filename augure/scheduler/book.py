"""The job book: the jobs stored in state.db, listed, paused and resumed, and each one's next
run (docs/jobs.md). The scheduler (augure/scheduler/runner.py) runs what falls due in it.

A job is a 5-field cron or a one-shot instant (UTC) with the IANA zone beside it; a cron reads
as crontab(5) reads it and APScheduler computes its fire times in that zone, so daylight-saving
changes follow the zone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
import time
from collections.abc import Collection
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from augure.common.clock import Clock
from augure.scheduler.jobs import (
    JOB_COLUMNS,
    JOB_ID,
    SKILL_JOB_PREFIX,
    TICK,
    Job,
    JobError,
    cron_trigger,
    next_fire,
    parse_run_at,
    refuse_skill,
)
from augure.store.state import Store

PAUSED_KEY = "scheduler.paused"


class JobBook:
    """The jobs and their schedules; every change wakes whoever runs them (`changed`)."""

    def __init__(
        self,
        *,
        store: Store,
        default_zone: str,
        owner_chat: str | None,
        clock: Clock = lambda: datetime.now(UTC),
    ) -> None:
        self.db = store.db
        self.zone = default_zone
        self.owner_chat = owner_chat
        self.now = clock
        self._wake = asyncio.Event()

    async def create(
        self,
        *,
        prompt: str,
        chat_id: str | None,
        cron: str | None = None,
        run_at: str | None = None,
        timezone: str | None = None,
        job_id: str | None = None,
        sources: Collection[str] = (),
    ) -> Job:
        """`sources`: the outside sources the unit making the job had read (none: the owner's
        own job); each run starts from them."""
        if (cron is None) == (run_at is None):
            raise JobError("give exactly one of cron (recurring) or run_at (once)")
        if not prompt.strip():
            raise JobError("a job needs a prompt: what should I do when it fires?")
        zone = timezone or self.zone
        try:
            ZoneInfo(zone)
        except (KeyError, ValueError):
            raise JobError(f"unknown time zone {zone!r}; use an IANA name") from None
        now = self.now()
        if cron is not None:
            first = cron_trigger(cron, zone).get_next_fire_time(None, now + TICK)
            next_run = first.astimezone(UTC) if first else None
        else:
            assert run_at is not None
            next_run = parse_run_at(run_at, zone, now)
        job_id = job_id or f"job-{int(time.time() * 1000) % 10**8:x}"
        if not JOB_ID.match(job_id) or len(job_id) > 64:
            raise JobError("job id: lowercase letters and digits in words joined by hyphens")
        target = chat_id or self.owner_chat
        if target is None:
            raise JobError("no chat to deliver to: set AUGURE_ALLOWED_USERS")
        try:
            await self.db.execute(
                "INSERT INTO jobs (id, cron, run_at, timezone, prompt, chat_id, next_run, "
                "created_at, sources) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job_id,
                    cron,
                    next_run.isoformat() if run_at and next_run else None,
                    zone,
                    prompt,
                    target,
                    next_run.isoformat() if next_run else None,
                    time.time(),
                    json.dumps(sorted(sources)) if sources else None,
                ),
            )
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc):
                raise JobError(f"a job with id {job_id!r} exists; delete it first") from None
            raise
        self._wake.set()
        job = await self.get(job_id)
        assert job is not None
        return job

    async def delete(self, job_id: str) -> bool:
        cursor = await self.db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
        return cursor.rowcount == 1

    async def remove(self, job_id: str) -> bool:
        """Delete one of the owner's jobs. A skill's schedule belongs to the skill: removing
        it here would bypass manage_skill's approval."""
        refuse_skill(job_id)
        return await self.delete(job_id)

    async def pause_job(self, job_id: str) -> Job:
        """Skip the job's runs until it is resumed; its schedule stays as it is."""
        return await self._set_job_paused(job_id, True)

    async def resume_job(self, job_id: str) -> Job:
        """Run the job again from its next run on: what fell while paused is not caught up."""
        return await self._set_job_paused(job_id, False)

    async def _set_job_paused(self, job_id: str, paused: bool) -> Job:
        refuse_skill(job_id)
        now = self.now()

        def update(connection: sqlite3.Connection) -> Job | str:
            row = connection.execute(
                f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            if row is None:
                return f"no job {job_id!r}; see `augure jobs list`"
            job = Job.from_row(row)
            # A run that fell due while paused (and no tick skipped it: the bot was stopped)
            # is dropped here, so resuming never runs it late or reports it missed.
            due = job.next_run is not None and datetime.fromisoformat(job.next_run) <= now
            if due and not paused and not job.cron:
                connection.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
                return f"{job_id} was a one-time job whose time passed while paused; it was removed"
            next_run = next_fire(job, now) if due and not paused else job.next_run
            connection.execute(
                "UPDATE jobs SET paused = ?, next_run = ? WHERE id = ?",
                (int(paused), next_run, job_id),
            )
            return dataclasses.replace(job, paused=paused, next_run=next_run)

        outcome = await self.db.write(update)
        if isinstance(outcome, str):
            raise JobError(outcome)
        self._wake.set()
        return outcome

    async def get(self, job_id: str) -> Job | None:
        row = await self.db.fetchone(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,))
        return Job.from_row(row) if row else None

    async def jobs(self) -> list[Job]:
        """The owner's jobs; skills' schedules are listed with the skills (/skills)."""
        return [
            Job.from_row(row)
            for row in await self.db.fetchall(
                f"SELECT {JOB_COLUMNS} FROM jobs WHERE skill IS NULL "
                "ORDER BY next_run IS NULL, next_run, id"
            )
        ]

    # -- skills on a schedule -----------------------------------------------------------

    async def schedule_skill(
        self, skill_id: str, cron: str, timezone: str | None, chat_id: str | None = None
    ) -> Job:
        """(Re)schedule a cron skill as the job `skill:<id>`; runs keep the usual ledger."""
        zone = timezone or self.zone
        try:
            ZoneInfo(zone)
        except (KeyError, ValueError):
            raise JobError(f"unknown time zone {zone!r}; use an IANA name") from None
        first = cron_trigger(cron, zone).get_next_fire_time(None, self.now() + TICK)
        # "owner" is resolved by the channel when delivering: the allowlist may change later.
        target = chat_id or self.owner_chat or "owner"
        job_id = SKILL_JOB_PREFIX + skill_id
        next_run = first.astimezone(UTC).isoformat() if first else None
        row = (job_id, cron, zone, f"run skill {skill_id}", target, next_run, time.time(), skill_id)

        def replace(connection: sqlite3.Connection) -> None:
            connection.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
            connection.execute(
                "INSERT INTO jobs (id, cron, timezone, prompt, chat_id, next_run, created_at, "
                "skill) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )

        await self.db.write(replace)
        self._wake.set()
        job = await self.get(job_id)
        assert job is not None
        return job

    async def unschedule_skill(self, skill_id: str) -> bool:
        return await self.delete(SKILL_JOB_PREFIX + skill_id)

    async def request_run(self, job_id: str, by: str) -> bool:
        """Run a job now, once, without changing its schedule (picked up by the loop); `by`
        (`cli`, `dashboard`) heads the run's origin chain."""
        cursor = await self.db.execute(
            "UPDATE jobs SET run_requested = 1, requested_by = ? WHERE id = ?", (by, job_id)
        )
        self._wake.set()
        return cursor.rowcount == 1

    async def paused(self) -> bool:
        row = await self.db.fetchone("SELECT value FROM settings WHERE key = ?", (PAUSED_KEY,))
        return bool(row and row[0] == "1")

    async def set_paused(self, paused: bool) -> None:
        await self.db.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (PAUSED_KEY, "1" if paused else "0"),
        )
        self._wake.set()

    async def _advance(self, job: Job, now: datetime) -> None:
        """Move the job past `now` (coalescing missed runs); a one-shot has no next run."""
        next_run = next_fire(job, now) if job.cron else None
        await self.db.execute("UPDATE jobs SET next_run = ? WHERE id = ?", (next_run, job.id))

    async def _outcome(self, job_id: str, scheduled: datetime, outcome: str) -> None:
        await self.db.execute(
            "UPDATE jobs SET last_run = ?, last_outcome = ? WHERE id = ?",
            (scheduled.isoformat(), outcome, job_id),
        )

    async def _made_of(self, job_id: str) -> tuple[str | None, tuple[str, ...]]:
        """The skill a job runs, if any, and the sources the unit that made it had read."""
        row = await self.db.fetchone("SELECT skill, sources FROM jobs WHERE id = ?", (job_id,))
        skill = str(row[0]) if row and row[0] else None
        return skill, tuple(json.loads(row[1])) if row and row[1] else ()

    async def _clear_request(self, job_id: str) -> None:
        await self.db.execute(
            "UPDATE jobs SET run_requested = 0, requested_by = NULL WHERE id = ?", (job_id,)
        )
