"""A job's run skipped because a `[budget]` cap is reached (docs/reference/spend.md): recorded
in the run ledger as `skipped`, never delivered as if it had run."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import datetime

from augure.llm.spend import BudgetReached
from augure.scheduler.jobs import Job
from augure.store.connection import Database


async def over_budget(
    db: Database,
    job: Job,
    scheduled: datetime,
    failure: Exception,
    delete: Callable[[str], Awaitable[bool]],
    tell: Callable[[str, str], Awaitable[bool]],
) -> bool:
    """True when `failure` is a budget refusal, now recorded. The owner hears of the cap
    once per period; only a one-shot, which has no other run, is told of here."""
    if not isinstance(failure, BudgetReached):
        return False
    await db.execute(
        "UPDATE job_runs SET status = 'skipped', reply = ?, finished_at = ? "
        "WHERE job_id = ? AND scheduled_for = ?",
        (str(failure), time.time(), job.id, scheduled.isoformat()),
    )
    await db.execute(
        "UPDATE jobs SET last_run = ?, last_outcome = ? WHERE id = ?",
        (scheduled.isoformat(), f"skipped (budget: {failure.why})", job.id),
    )
    if not job.cron:
        await delete(job.id)
        await tell(job.chat_id, f"Skipped one-time job {job.id}: {failure}.")
    return True
