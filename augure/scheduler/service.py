"""Scheduled jobs that never run twice, never fire early and are never silently lost.

Jobs live in SQLite: a 5-field cron or a one-shot instant (UTC) with the IANA zone beside it;
a cron reads as crontab(5) reads it and APScheduler computes its fire times in that zone, so
daylight-saving changes follow the zone (docs/jobs.md).
Each run is claimed in a ledger unique per (job, scheduled instant) before the turn starts,
and its reply is stored before it is delivered:

- a restart after the reply was stored delivers it (no second turn);
- a restart during the turn marks the run interrupted and tells the owner (no second turn:
  the turn may already have acted);
- a run missed while the bot was down runs once at start if it is within
  `scheduler.misfire_grace_seconds`, else it is recorded as missed and the owner is told;
  a recurring job that missed several runs coalesces them into one.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import sqlite3
import time
from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from augure.common.clock import Clock
from augure.common.ports import Notifier
from augure.scheduler.jobs import (
    JOB_COLUMNS,
    JOB_ID,
    SKILL_JOB_PREFIX,
    TICK,
    Job,
    RunSkill,
    RunTurn,
    latest_fire,
    next_fire,
    parse_run_at,
    realign_cron_jobs,
    refuse_skill,
)
from augure.scheduler.jobs import JobError as JobError
from augure.scheduler.jobs import cron_trigger as cron_trigger
from augure.scheduler.jobs import local as local
from augure.scheduler.skips import over_budget
from augure.store.state import Store

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # how soon changes made by the CLI are noticed
REDELIVER_SECONDS = 60.0  # an undelivered reply is offered again this often
PAUSED_KEY = "scheduler.paused"


FAILED_RUN = (
    "The job could not finish: something went wrong on my side while it ran. The details "
    "are in the log (logs/augure.log in the home). A recurring job runs again at its next "
    "time; `augure jobs run ID` runs it now."
)


class Scheduler:
    def __init__(
        self,
        *,
        store: Store,
        run_turn: RunTurn,
        default_zone: str,
        misfire_grace_seconds: int,
        owner_chat: str | None,
        clock: Clock = lambda: datetime.now(UTC),
        run_skill: RunSkill | None = None,
        notifier: Notifier | None = None,
    ) -> None:
        self.db = store.db
        self.run_turn = run_turn
        self.run_skill = run_skill
        self.zone = default_zone
        self.grace = timedelta(seconds=misfire_grace_seconds)
        self.owner_chat = owner_chat
        self.now = clock
        self.notifier = notifier
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._running: set[asyncio.Task[None]] = set()
        self._in_flight: set[tuple[str, str]] = set()  # (job, instant) runs of this process
        self._retry_at: dict[tuple[str, str], float] = {}  # undelivered replies: next attempt

    # -- jobs ---------------------------------------------------------------------------

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

    # -- running ------------------------------------------------------------------------

    async def start(self) -> None:
        await self.recover()
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*self._running, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("scheduler tick failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)

    async def tick(self) -> list[asyncio.Task[None]]:
        """Start every due run; returns their tasks (tests await them)."""
        started: list[asyncio.Task[None]] = []
        if await self.paused():
            return started
        now = self.now()
        rows = list(
            await self.db.fetchall(
                f"SELECT {JOB_COLUMNS}, run_requested, requested_by FROM jobs "
                "WHERE run_requested = 1 OR (next_run IS NOT NULL AND next_run <= ?)",
                (now.isoformat(),),
            )
        )
        await self._redeliver()
        for row in rows:
            job, requested = Job.from_row(row), bool(row[10])
            if requested:  # "run now" is the owner's explicit ask: a paused job runs too
                await self._clear_request(job.id)
                started += await self._claim(job, now, now, requested_by=row[11] or "cli")
            if job.next_run and datetime.fromisoformat(job.next_run) <= now:
                scheduled = latest_fire(job, datetime.fromisoformat(job.next_run), now)
                if job.paused:
                    await self._skip(job, scheduled, now)
                else:
                    started += await self._due(job, scheduled, now)
        return started

    async def _due(self, job: Job, scheduled: datetime, now: datetime) -> list[asyncio.Task[None]]:
        await self._advance(job, now)
        if now - scheduled > self.grace:
            late = int((now - scheduled).total_seconds())
            when = local(scheduled.isoformat(), ZoneInfo(job.timezone))
            await self._record(job.id, scheduled, "missed", job.chat_id, finished=True)
            await self._outcome(job.id, scheduled, "missed")
            await self._tell(
                job.chat_id,
                f"Missed scheduled job {job.id} ({when}): I was not running, and it is "
                f"{late} s late, past the grace of "
                f"{int(self.grace.total_seconds())} s (scheduler.misfire_grace_seconds).",
            )
            if not job.cron:
                await self.delete(job.id)
            return []
        return await self._claim(job, scheduled, now)

    async def _skip(self, job: Job, scheduled: datetime, now: datetime) -> None:
        """A paused job's run: recorded as skipped, not run; a one-shot has no other run."""
        await self._advance(job, now)
        await self._record(job.id, scheduled, "skipped", job.chat_id, finished=True)
        await self._outcome(job.id, scheduled, "skipped (paused)")
        if not job.cron:
            await self.delete(job.id)
            when = local(scheduled.isoformat(), ZoneInfo(job.timezone))
            await self._tell(
                job.chat_id, f"Skipped one-time job {job.id} ({when}): it was paused at its time."
            )

    async def _advance(self, job: Job, now: datetime) -> None:
        """Move the job past `now` (coalescing missed runs); a one-shot has no next run."""
        next_run = next_fire(job, now) if job.cron else None
        await self.db.execute("UPDATE jobs SET next_run = ? WHERE id = ?", (next_run, job.id))

    async def _claim(
        self, job: Job, scheduled: datetime, now: datetime, requested_by: str | None = None
    ) -> list[asyncio.Task[None]]:
        """`requested_by`: a run the owner asked for (not the schedule's), and where."""
        if not await self._record(job.id, scheduled, "running", job.chat_id):
            return []  # this instant already ran (or is running): never twice
        key = (job.id, scheduled.isoformat())
        self._in_flight.add(key)
        task = asyncio.create_task(self._run(job, scheduled, requested_by))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        task.add_done_callback(lambda _: self._in_flight.discard(key))
        return [task]

    async def _run(self, job: Job, scheduled: datetime, requested_by: str | None) -> None:
        manual = requested_by is not None
        chain = (requested_by, "job") if requested_by is not None else ("job",)
        try:
            skill, sources = await self._made_of(job.id)
            if skill is not None and self.run_skill is not None:
                reply = await self.run_skill(skill, chain)
            else:
                reply = await self.run_turn(f"job:{job.id}", job.prompt, chain, sources)
        except Exception as exc:
            if await over_budget(self.db, job, scheduled, exc, self.delete, self._tell):
                return
            log.exception("job %s failed", job.id)
            # The owner reads this in the chat: what happened and where to look, never an
            # exception's class or text (it may quote what the job was handling).
            reply = FAILED_RUN
        if manual or job.cron:
            await self._outcome(job.id, scheduled, "ok")
        await self.db.execute(
            "UPDATE job_runs SET status = 'done', reply = ?, finished_at = ? "
            "WHERE job_id = ? AND scheduled_for = ?",
            (reply, time.time(), job.id, scheduled.isoformat()),
        )
        if not manual and not job.cron:
            await self.delete(job.id)  # a one-shot has run; its reply is safe in the ledger
        await self._deliver(job.id, scheduled.isoformat(), job.chat_id, reply)

    async def _deliver(self, job_id: str, scheduled: str, chat_id: str, reply: str) -> None:
        if not await self._tell(chat_id, f"⏰ *{job_id}*\n\n{reply}"):
            return  # stays 'done': retried on the next tick and after a restart
        await self.db.execute(
            "UPDATE job_runs SET status = 'delivered' WHERE job_id = ? AND scheduled_for = ?",
            (job_id, scheduled),
        )

    async def _redeliver(self) -> None:
        rows = list(
            await self.db.fetchall(
                "SELECT job_id, scheduled_for, chat_id, reply FROM job_runs WHERE status = 'done'"
            )
        )
        for job_id, scheduled, chat_id, reply in rows:
            key = (job_id, scheduled)
            if key in self._in_flight or time.monotonic() < self._retry_at.get(key, 0.0):
                continue
            self._retry_at[key] = time.monotonic() + REDELIVER_SECONDS
            await self._deliver(job_id, scheduled, chat_id, reply or "")

    async def recover(self) -> None:
        """After a restart: recompute cron jobs' next runs; deliver stored replies; report
        turns cut off mid-way."""
        await self._realign()
        rows = list(
            await self.db.fetchall(
                "SELECT job_id, scheduled_for, status, chat_id, reply FROM job_runs "
                "WHERE status IN ('running', 'done')"
            )
        )
        for job_id, scheduled, status, chat_id, reply in rows:
            if status == "done":
                await self._deliver(job_id, scheduled, chat_id, reply or "")
                continue
            await self.db.execute(
                "UPDATE job_runs SET status = 'interrupted' WHERE job_id = ? AND scheduled_for = ?",
                (job_id, scheduled),
            )
            await self._tell(
                chat_id,
                f"Scheduled job {job_id} was interrupted by a restart while it ran; it was "
                "not run again, since it may already have acted.",
            )
        # One-shots whose run finished but were not removed before a restart.
        await self.db.execute(
            "DELETE FROM jobs WHERE cron IS NULL AND next_run IS NULL AND run_requested = 0"
        )

    async def _realign(self) -> None:
        """Next runs stored by earlier versions were on the wrong weekdays (docs/jobs.md)."""
        now = self.now()
        stopped = await self.db.write(lambda connection: realign_cron_jobs(connection, now))
        for job, reason in stopped:
            await self._tell(
                job.chat_id,
                f"Job {job.id} stopped: {reason}. Remove it, or give it a valid schedule "
                "(docs/jobs.md).",
            )

    async def _record(
        self, job_id: str, scheduled: datetime, status: str, chat_id: str, finished: bool = False
    ) -> bool:
        cursor = await self.db.execute(
            "INSERT OR IGNORE INTO job_runs (job_id, scheduled_for, status, chat_id, started_at, "
            "finished_at) VALUES (?, ?, ?, ?, ?, ?)",
            (job_id, scheduled.isoformat(), status, chat_id, time.time(),
             time.time() if finished else None),
        )  # fmt: skip
        return cursor.rowcount == 1

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

    async def _tell(self, chat_id: str, text: str) -> bool:
        if self.notifier is None:
            log.warning("no channel to deliver to %s: %s", chat_id, text[:200])
            return False
        try:
            await self.notifier.send(chat_id, text)
        except Exception:
            log.exception("could not deliver to %s", chat_id)
            return False
        return True
