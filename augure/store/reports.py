"""Reads of state.db for the reports channels render: pages of invocations, usage per day.

A page of invocations is a keyset range (created_at, rowid) walked newest first down the index
of the one filter in use, so its cost does not grow with the number of records.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from augure.store.state import Store

PAGE_SIZE = 50
FILTERS = ("tool", "status", "origin")
SUMMARY_COLUMNS = "rowid, id, tool, origin, status, approval_status, decided_by, created_at, error"


@dataclass(frozen=True)
class InvocationSummary:
    """One row of the audit log's listing: enough to find a call, not its arguments."""

    rowid: int
    id: str
    tool: str
    origin: str
    status: str
    approval_status: str
    decided_by: str | None
    created_at: float
    error: str | None


@dataclass(frozen=True)
class InvocationPage:
    rows: list[InvocationSummary]
    next_cursor: str | None  # "created_at:rowid" of the last row, when more follow


def parse_cursor(text: str | None) -> tuple[float, int] | None:
    if not text:
        return None
    created, _, rowid = text.partition(":")
    try:
        return float(created), int(rowid)
    except ValueError:
        return None


async def invocations(
    store: Store, filters: dict[str, str], cursor: str | None, size: int = PAGE_SIZE
) -> InvocationPage:
    where: list[str] = ["1 = 1"]
    params: list[str | float | int] = []
    for column in FILTERS:
        value = filters.get(column)
        if not value:
            continue
        if column == "origin":
            # Who started the work: the chain itself, or any chain it heads (`chat>code`);
            # a range on the origin index, `?` being the character after `>`.
            where.append("(origin = ? OR (origin >= ? AND origin < ?))")
            params += [value, f"{value}>", f"{value}?"]
        else:
            where.append(f"{column} = ?")
            params.append(value)
    after = parse_cursor(cursor)
    if after is not None:
        where.append("(created_at < ? OR (created_at = ? AND rowid < ?))")
        params += [after[0], after[0], after[1]]
    rows = await store.db.fetchall(
        f"SELECT {SUMMARY_COLUMNS} FROM invocations WHERE {' AND '.join(where)} "
        "ORDER BY created_at DESC, rowid DESC LIMIT ?",
        [*params, size + 1],
    )
    listed = [InvocationSummary(**dict(row)) for row in rows[:size]]
    more = len(rows) > size and listed
    next_cursor = f"{listed[-1].created_at!r}:{listed[-1].rowid}" if more else None
    return InvocationPage(listed, next_cursor)


async def tool_names(store: Store) -> list[str]:
    """Every tool with a record: one index seek per tool name (a DISTINCT would read every
    entry of the index, 100,000 of them in a large home)."""
    rows = await store.db.fetchall(
        "WITH RECURSIVE names(tool) AS ("
        " SELECT MIN(tool) FROM invocations"
        " UNION ALL"
        " SELECT (SELECT MIN(tool) FROM invocations WHERE tool > names.tool)"
        " FROM names WHERE tool IS NOT NULL"
        ") SELECT tool FROM names WHERE tool IS NOT NULL"
    )
    return [row[0] for row in rows]


async def count_since(store: Store, since: float) -> int:
    row = await store.db.fetchone(
        "SELECT COUNT(*) FROM invocations WHERE created_at >= ?", (since,)
    )
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class Day:
    day: date
    prompt_tokens: int
    completion_tokens: int
    turns: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def midnight(zone: ZoneInfo, days_ago: int = 0) -> datetime:
    today = datetime.now(zone).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(days=days_ago)


async def usage_per_day(store: Store, zone: ZoneInfo, days: int) -> list[Day]:
    """The last `days` days in the agent's time zone, oldest first, empty days included."""
    first = midnight(zone, days - 1)
    rows = await store.db.fetchall(
        "SELECT created_at, prompt_tokens, completion_tokens FROM usage WHERE created_at >= ?",
        (first.timestamp(),),
    )
    totals: dict[date, list[int]] = {
        (first + timedelta(days=n)).date(): [0, 0, 0] for n in range(days)
    }
    for created_at, prompt, completion in rows:
        bucket = totals.get(datetime.fromtimestamp(created_at, zone).date())
        if bucket is not None:
            bucket[0] += prompt
            bucket[1] += completion
            bucket[2] += 1
    return [Day(day, *values) for day, values in sorted(totals.items())]
