"""The spend ledger in state.db: each model call with its tokens and cost, and the notices
sent once per budget period (docs/reference/spend.md)."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field

from augure.store.connection import Database


@dataclass(frozen=True)
class ModelCall:
    day: str  # YYYY-MM-DD in the agent's time zone
    month: str  # YYYY-MM
    origin: str  # chat, job, skill, heartbeat, subagent, summary, ...
    model: str
    outcome: str = "answered"  # or "skipped": the budget refused it
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None  # None: the model has no price
    estimated: bool = False  # no usage came with the answer: the tokens are estimated


@dataclass
class CallTotals:
    """One period's calls, for one origin or all of them."""

    calls: int = 0
    skipped: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0  # of the calls whose price is known
    unpriced_calls: int = 0  # answered calls whose cost is unknown
    estimated_calls: int = 0  # answered calls whose tokens are estimated (no usage reported)

    def add(self, other: CallTotals) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Period:
    key: str  # the day or the month
    total: CallTotals = field(default_factory=CallTotals)
    by_origin: dict[str, CallTotals] = field(default_factory=dict)
    by_model: dict[str, CallTotals] = field(default_factory=dict)


_SUMS = (
    "SUM(outcome = 'answered'), SUM(outcome = 'skipped'), SUM(prompt_tokens), "
    "SUM(cached_tokens), SUM(completion_tokens), COALESCE(SUM(cost_usd), 0), "
    "SUM(outcome = 'answered' AND cost_usd IS NULL), SUM(outcome = 'answered' AND estimated)"
)


class Ledger:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, call: ModelCall) -> None:
        """The call and its period's running totals, in one transaction."""

        def insert(connection: sqlite3.Connection) -> None:
            connection.execute(
                "INSERT INTO model_calls (created_at, day, month, origin, model, outcome, "
                "prompt_tokens, cached_tokens, completion_tokens, cost_usd, estimated) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (time.time(), call.day, call.month, call.origin, call.model, call.outcome,
                 call.prompt_tokens, call.cached_tokens, call.completion_tokens, call.cost_usd,
                 int(call.estimated)),
            )  # fmt: skip
            if call.cost_usd:
                connection.executemany(
                    "INSERT INTO spend_totals (period, usd) VALUES (?, ?) "
                    "ON CONFLICT (period) DO UPDATE SET usd = usd + excluded.usd",
                    [(f"day:{call.day}", call.cost_usd), (f"month:{call.month}", call.cost_usd)],
                )

        await self.db.write(insert)

    async def spent(self, day: str, month: str) -> tuple[float, float]:
        """USD spent on priced calls that day and that month."""
        rows = await self.db.fetchall(
            "SELECT period, usd FROM spend_totals WHERE period IN (?, ?)",
            (f"day:{day}", f"month:{month}"),
        )
        totals = {str(period): float(usd) for period, usd in rows}
        return totals.get(f"day:{day}", 0.0), totals.get(f"month:{month}", 0.0)

    async def period(self, column: str, key: str) -> Period:
        """Every call of one day (`column` "day") or month ("month"), by origin and model."""
        assert column in ("day", "month")
        found = Period(key)
        for group, into in (("origin", found.by_origin), ("model", found.by_model)):
            rows = await self.db.fetchall(
                f"SELECT {group}, {_SUMS} FROM model_calls WHERE {column} = ? GROUP BY {group} "
                f"ORDER BY {group}",
                (key,),
            )
            for name, *sums in rows:
                into[name] = CallTotals(*(value or 0 for value in sums))
        for tally in found.by_origin.values():
            found.total.add(tally)
        return found

    async def days(self, first: str) -> list[tuple[str, float, int]]:
        """(day, USD of priced calls, unpriced calls) of each day from `first` that had calls."""
        rows = await self.db.fetchall(
            "SELECT day, COALESCE(SUM(cost_usd), 0), "
            "SUM(outcome = 'answered' AND cost_usd IS NULL) FROM model_calls WHERE day >= ? "
            "GROUP BY day ORDER BY day",
            (first,),
        )
        return [(str(day), float(usd), int(unknown or 0)) for day, usd, unknown in rows]

    async def claim_notice(self, period: str, kind: str) -> bool:
        """True the first time only: the notice `kind` of `period` is this caller's to send."""
        changed = await self.db.execute(
            "INSERT OR IGNORE INTO budget_notices (period, kind, sent_at) VALUES (?, ?, ?)",
            (period, kind, time.time()),
        )
        return changed.rowcount == 1
