"""What the owner reads, from Telegram, the dashboard or the shell: usage and spend, approval
records, tasks, memory, skills, limits, recall (docs/architecture.md, "The door"). Everything
here is read from state.db and the home, so a process beside the bot shows the same."""

from __future__ import annotations

import json
import time
from typing import Any
from zoneinfo import ZoneInfo

from augure.core.door.served import Served
from augure.core.door.types import (
    Day,
    Hit,
    InvocationPage,
    LastTurn,
    Record,
    TaskRow,
    Tokens,
    UsageReport,
)
from augure.llm.models import build_models
from augure.skills.store import SkillListing
from augure.store import reports
from augure.store.archive import Archive, Window
from augure.store.tasks import TaskState
from augure.tools.limits import Limits, Use
from augure.tools.recall_search import Searcher
from augure.tools.recall_vectors import Embedder


class Reports:
    """The reports that decide something are methods; the others are the lower service's own
    methods, handed over once (nothing forwards a call it does not change)."""

    def __init__(self, state: Served) -> None:
        self._state = state
        self.clean = state.redact  # secrets masked, as in every record shown
        # Spend today and this month against the `[budget]` caps, by kind of work and model
        # (read from state.db, so the dashboard beside the bot shows the same).
        self.spend = state.budget.report
        self.task = state.tasks.tasks.get
        self.memory_files = state.memory.list
        # Raises MemoryPathError or an OSError for a path outside memory or missing.
        self.read_memory = state.memory.read

    def uptime_seconds(self) -> int:
        return int(time.time() - self._state.started_at)

    def model(self) -> str:
        return self._state.llm.model

    # -- usage and spend -------------------------------------------------------------------

    async def usage(self, chat_id: str) -> UsageReport:
        store = self._state.store
        midnight = reports.midnight(ZoneInfo(self._state.config.zone))
        last = await store.last_usage(chat_id)
        today = await store.usage_totals(since=midnight.timestamp())
        return UsageReport(
            last=_last_turn(last) if last is not None else None,
            today=Tokens(**today),
            total=Tokens(**await store.usage_totals()),
        )

    async def usage_per_day(self, days: int) -> list[Day]:
        zone = ZoneInfo(self._state.config.zone)
        return await reports.usage_per_day(self._state.store, zone, days)

    async def calls_today(self) -> int:
        midnight = reports.midnight(ZoneInfo(self._state.config.zone))
        return await reports.count_since(self._state.store, midnight.timestamp())

    async def limits(self) -> list[Use]:
        """Each tool profile's limits with today's use (docs/reference/limits.md)."""
        config = self._state.config
        return await Limits(config.profiles, self._state.store, config.zone).usage()

    # -- the audit log ---------------------------------------------------------------------

    async def pending_approvals(self, limit: int = 100) -> list[Record]:
        """`limit` -1: every one."""
        rows = await self._state.audit.listing(approval_status="pending", limit=limit)
        return [Record.of(row) for row in rows]

    async def records(
        self, *, status: str | None = None, tool: str | None = None, limit: int = 50
    ) -> list[Record]:
        """The newest invocations, of one tool or in one status when given."""
        rows = await self._state.audit.listing(status=status, tool=tool, limit=limit)
        return [Record.of(row) for row in rows]

    async def invocation(self, invocation_id: str) -> Record | None:
        row = await self._state.audit.get(invocation_id)
        return Record.of(row) if row is not None else None

    async def invocations(self, filters: dict[str, str], cursor: str | None) -> InvocationPage:
        return await reports.invocations(self._state.store, filters, cursor)

    async def tool_names(self) -> list[str]:
        """Every tool with a record."""
        return await reports.tool_names(self._state.store)

    # -- tasks, memory, skills, recall -----------------------------------------------------

    async def tasks(
        self,
        *,
        chat_id: str | None = None,
        status: TaskState | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[TaskRow]:
        rows = self._state.tasks.tasks
        return await rows.list(limit=limit, offset=offset, status=status, chat_id=chat_id)

    async def skills(self) -> list[SkillListing]:
        """Every skill with its metadata and last run."""
        return list(await self._state.skill_files.listing())

    async def recall(self, query: str, chat_id: str | None, limit: int) -> list[Hit]:
        """The archive and the memory files searched, best match first (docs/recall.md); the
        query's embedding, with `[recall] embeddings_model`, counted like any model call."""
        state, config = self._state, self._state.config
        embedder = None
        if config.recall.embeddings_model is not None:
            embedder = Embedder(
                build_models(config, state.llm, state.llm, state.budget), config.recall
            )
        searcher = Searcher(
            Archive(state.store.db),
            state.memory,
            embedder.embed if embedder else None,
            config.recall.embeddings_model,
        )
        try:
            return await searcher.find(query, Window(chat_id), limit)
        finally:
            if embedder is not None:
                await embedder.models.close()


def _last_turn(row: dict[str, Any]) -> LastTurn:
    return LastTurn(
        model=row["model"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        llm_calls=row["llm_calls"],
        breakdown=json.loads(row["breakdown"] or "{}"),
    )
