"""What the door's desks return: every type a channel, the dashboard or the CLI reads from the
door is named here, so none of them imports the parts below it (docs/architecture.md, "The
door"). The reports made here are frozen rows; the others are the parts' own frozen rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from augure.llm.models import FallbackUsed
from augure.scheduler.jobs import Job
from augure.store.audit import STATUSES as INVOCATION_STATUSES
from augure.store.audit import Rule
from augure.store.inbox import Waiting
from augure.store.reports import FILTERS as INVOCATION_FILTERS
from augure.store.reports import Day, InvocationPage
from augure.store.tasks import STATUSES as TASK_STATUSES
from augure.store.tasks import TaskRow
from augure.tools.limits import Use
from augure.tools.recall_search import Hit
from augure.tools.result import ToolResult

__all__ = [
    "INVOCATION_FILTERS",
    "INVOCATION_STATUSES",
    "TASK_STATUSES",
    "Day",
    "ForgetOutcome",
    "Hit",
    "InvocationPage",
    "Job",
    "JobsReport",
    "LastTurn",
    "Record",
    "Rule",
    "StatusReport",
    "TaskRow",
    "Tokens",
    "ToolResult",
    "UsageReport",
    "Use",
    "Waiting",
]


@dataclass(frozen=True)
class StatusReport:
    """`/status`: what runs, and how it stands."""

    version: str
    model: str
    uptime_seconds: int
    tools: list[str]
    pending_approvals: int
    paused: bool
    jobs: list[Job]
    zone: str
    limits: list[Use]
    mcp: str | None  # one line on the MCP servers, secrets masked; None without servers
    fallback: FallbackUsed | None = None  # the last time a fallback model answered


@dataclass(frozen=True)
class Tokens:
    """Tokens over a span of turns."""

    prompt_tokens: int
    completion_tokens: int
    turns: int


@dataclass(frozen=True)
class LastTurn:
    """A chat's last turn: its model, tokens, model calls, and the estimated split of what
    it sent (a part's name to its tokens)."""

    model: str
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    breakdown: dict[str, int]


@dataclass(frozen=True)
class UsageReport:
    last: LastTurn | None  # None before the chat's first turn
    today: Tokens
    total: Tokens


@dataclass(frozen=True)
class JobsReport:
    zone: str
    paused: bool
    jobs: list[Job]
    # Jobs run only inside `augure run`: false while no bot runs on the home.
    bot_running: bool = True


@dataclass(frozen=True)
class Record:
    """One call in the audit log (docs/reference/approvals.md): what was asked and by whom,
    what the owner decided, how it ended."""

    id: str
    tool: str
    origin: str  # the caller's chain, `chat>background`
    input: str  # the arguments, as JSON
    status: str
    approval_status: str
    created_at: float
    chat_id: str | None = None
    turn_id: str | None = None
    target: str | None = None  # the canonical target a rule matches
    output: str | None = None
    decided_by: str | None = None
    reason: str | None = None
    error: str | None = None
    completed_at: float | None = None
    approval_digest: str | None = None  # sha256 of what the request showed
    parent: str | None = None  # the call this one was made from (a batch, a snippet)

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Record:
        return cls(**{kept.name: row[kept.name] for kept in fields(cls) if kept.name in row})


@dataclass(frozen=True)
class ForgetOutcome:
    """What became of a request to forget a chat (docs/recall.md): `done`, with the line
    saying what went; `rejected`; `busy`, with the work under way that would write its words
    after the forget; or `requested` when no running bot took the request."""

    state: str
    removed: str | None = None
    running: tuple[str, ...] = ()
