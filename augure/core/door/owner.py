"""The owner's desk: what the owner changes, from Telegram, the dashboard or the shell —
approvals and rules, jobs, background tasks, forgetting (docs/architecture.md, "The door").
It works on a running core and on the state alone (`Augure.reading`) alike: a decision is a
conditional UPDATE a running bot's gate polls for, a job's pause a row its scheduler reads."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from augure.core import forgetting
from augure.core.door.served import Served
from augure.core.door.types import ForgetOutcome, JobsReport
from augure.host.home import holder
from augure.scheduler.book import JobBook
from augure.scheduler.jobs import JobError
from augure.store.words import forget_entry

# How long `forget_chat` waits for a running bot to take its request before giving up.
PICKUP_SECONDS = 15.0


class OwnerDesk:
    """The verbs that decide something are methods; the others are the lower service's own
    methods, handed over once (nothing forwards a call it does not change)."""

    def __init__(self, state: Served) -> None:
        self._state = state
        self.book: JobBook = state.scheduler
        # Settles a pending request, as a button does; None when it was already decided.
        self.decide = state.gate.decide
        self.rules = state.audit.rules
        self.add_rule = state.audit.add_rule
        self.revoke_rule = state.audit.revoke_rule
        self.pause_jobs = state.scheduler.set_paused
        # Asked of the running bot, which runs it within a second (or at its next start).
        self.run_job_now = state.scheduler.request_run
        self.cancel_task = state.tasks.cancel  # only a task this process runs is stopped
        # A one-time link to the dashboard; None when no dashboard serves.
        self.login_link = state.logins.login_url

    # -- jobs ------------------------------------------------------------------------------

    async def jobs(self) -> JobsReport:
        scheduler = self._state.scheduler
        running = holder(self._state.config.home) is not None
        return JobsReport(scheduler.zone, await scheduler.paused(), await scheduler.jobs(), running)

    async def pause_job(self, job_id: str, paused: bool) -> bool:
        """False when there is no such job."""
        scheduler = self._state.scheduler
        try:
            await (scheduler.pause_job if paused else scheduler.resume_job)(job_id)
        except JobError:
            return False
        return True

    # -- background tasks ------------------------------------------------------------------

    def tasks_running_here(self) -> set[str]:
        """The tasks this process runs: only those can be cancelled from here."""
        return set(self._state.tasks.running())

    # -- forgetting ------------------------------------------------------------------------

    async def forget_entry(self, entry: int) -> bool:
        """One archived message out of `recall` (docs/recall.md); False when there is none."""
        return await forget_entry(self._state.store.db, entry)

    async def forget_chat(self, chat_id: str) -> ForgetOutcome:
        """Asks the running bot to forget a chat once the owner approves, and waits for the
        outcome (docs/recall.md)."""
        store = self._state.store
        await forgetting.write_request(store, chat_id, {"state": "requested"})
        try:
            state = await self._outcome(chat_id)
        finally:
            await forgetting.drop_request(store, chat_id)
        done = state["state"] == "done"
        removed = forgetting.summary(chat_id, state) if done else None
        return ForgetOutcome(state["state"], removed, tuple(state.get("running", ())))

    async def _outcome(self, chat_id: str) -> dict[str, Any]:
        approval_seconds = self._state.config.approval.timeout_seconds
        started = time.monotonic()
        state: dict[str, Any] = {"state": "requested"}
        while True:
            state = dict(await forgetting.requests(self._state.store)).get(chat_id, state)
            waited = time.monotonic() - started
            if state.get("state") in ("done", "rejected", "busy"):
                return state
            if state.get("state") == "requested" and waited > PICKUP_SECONDS:
                return state
            if waited > PICKUP_SECONDS + approval_seconds + 10:
                return {"state": "rejected"}
            await asyncio.sleep(0.25)
