"""The scheduler: runs the job book's due jobs, never twice, never early, never silently lost.

Each run is claimed in a ledger unique per (job, scheduled instant) before the turn starts,
and its reply is stored before it is delivered:

- a restart after the reply was stored delivers it (no second turn);
- a restart during the turn marks the run interrupted and tells the owner (no second turn:
  the turn may already have acted);
- a run missed while the bot was down runs once at start if it is within
  `scheduler.misfire_grace_seconds`, else it is recorded as missed and the owner is told;
  a recurring job that missed several runs coalesces them into one.

The jobs themselves, their pauses and next runs, are the book's (augure/scheduler/book.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from augure.common.clock import Clock
from augure.common.ports import Notifier
from augure.scheduler.book import JobBook
from augure.scheduler.jobs import (
    JOB_COLUMNS,
    Job,
    RunSkill,
    RunTurn,
    latest_fire,
    local,
    realign_cron_jobs,
)
from augure.scheduler.skips import over_budget
from augure.store.state import Store

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # how soon changes made by the CLI are noticed
REDELIVER_SECONDS = 60.0  # an undelivered reply is offered again this often

FAILED_RUN = (
    "The job could not finish: something went wrong on my side while it ran. The details "
    "are in the log (logs/augure.log in the home). A recurring job runs again at its next "
    "time; `augure jobs run ID` runs it now."
)


class Scheduler(JobBook):
    """The job book, and the loop that runs its due jobs through `run_turn` / `run_skill`."""

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
        super().__init__(store=store, default_zone=default_zone, owner_chat=owner_chat, clock=clock)
        self.run_turn = run_turn
        self.run_skill = run_skill
        self.grace = timedelta(seconds=misfire_grace_seconds)
        self.notifier = notifier
        self._task: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._in_flight: set[tuple[str, str]] = set()  # (job, instant) runs of this process
        self._retry_at: dict[tuple[str, str], float] = {}  # undelivered replies: next attempt

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
