"""The verbs a channel calls: each does one thing the owner asked for and returns data the
channel renders. Telegram, the terminal and the dashboard reach the core only through these,
never through its parts (an import-linter contract keeps the store, the gate and the agent
out of their reach). See docs/architecture.md, "Channels".
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from augure import __version__
from augure.agent.personas import Personas
from augure.agent.turn import Later, Reply, TurnStream
from augure.approval.gate import ApprovalGate
from augure.background import TaskManager
from augure.common.content import Content
from augure.common.logins import LoginTokens
from augure.common.ports import Decision, Verdict
from augure.config.settings import Config
from augure.core.app import Core
from augure.core.speaking import speak
from augure.core.spend import Cap as Cap
from augure.core.spend import SpendCaps
from augure.core.spend import SpendReport as SpendReport
from augure.core.spend import report_json as report_json
from augure.core.spend import report_lines as report_lines
from augure.host.home import holder
from augure.host.secrets import Redactor
from augure.llm.client import LLM
from augure.llm.models import FallbackUsed
from augure.memory.store import MemoryStore
from augure.scheduler.jobs import Job, JobError
from augure.scheduler.runner import Scheduler
from augure.skills.model import SkillMeta
from augure.skills.store import SkillRecord, SkillStore
from augure.store import reports
from augure.store.audit import STATUSES as INVOCATION_STATUSES
from augure.store.audit import Audit, Rule, new_id
from augure.store.connection import StateError as StateError
from augure.store.connection import StoreBusy as StoreBusy
from augure.store.inbox import Inbox
from augure.store.inbox import Waiting as Waiting
from augure.store.reports import FILTERS as INVOCATION_FILTERS
from augure.store.reports import Day as Day
from augure.store.reports import InvocationPage as InvocationPage
from augure.store.spend import CallTotals as CallTotals
from augure.store.spend import Ledger
from augure.store.spend import Period as Period
from augure.store.state import Store
from augure.store.tasks import TaskRow
from augure.tools.base import Tool
from augure.tools.limits import Use

__all__ = [
    "INVOCATION_FILTERS",
    "INVOCATION_STATUSES",
    "CallTotals",
    "Cap",
    "Day",
    "Front",
    "InvocationPage",
    "Jobs",
    "Period",
    "Served",
    "SpendReport",
    "StateError",
    "Status",
    "StoreBusy",
    "Usage",
    "Waiting",
    "report_json",
    "report_lines",
]


class SkillFiles(Protocol):
    @property
    def files(self) -> SkillStore: ...


class Served(Protocol):
    """What the reports and the owner's actions read: the bot's own core, or the state of
    `augure dashboard`'s process (augure.core.app.Standalone), which runs nothing and reaches a
    running bot through state.db only."""

    @property
    def config(self) -> Config: ...
    @property
    def store(self) -> Store: ...
    @property
    def memory(self) -> MemoryStore: ...
    @property
    def audit(self) -> Audit: ...
    @property
    def gate(self) -> ApprovalGate: ...
    @property
    def scheduler(self) -> Scheduler: ...
    @property
    def skills(self) -> SkillFiles: ...
    @property
    def tasks(self) -> TaskManager: ...
    @property
    def llm(self) -> LLM: ...
    @property
    def redact(self) -> Redactor: ...
    @property
    def started_at(self) -> float: ...
    @property
    def logins(self) -> LoginTokens: ...


@dataclass(frozen=True)
class Status:
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
class Usage:
    last: dict[str, Any] | None  # this chat's last turn: model, tokens, calls, breakdown
    today: dict[str, int]
    total: dict[str, int]


@dataclass(frozen=True)
class Jobs:
    zone: str
    paused: bool
    jobs: list[Job]
    # Jobs run only inside `augure run`: false while no bot runs on the home.
    bot_running: bool = True


class Front:
    """The core as its channels see it. `core` is the running core (absent in `augure
    dashboard`'s process, where the verbs that need one say where to go instead); `steps` is
    the lifespan's journal (augure.core.lifespan)."""

    def __init__(
        self, state: Served, *, core: Core | None = None, steps: list[str] | None = None
    ) -> None:
        self._state = state
        self.core = core
        self.steps = steps if steps is not None else []

    @property
    def config(self) -> Config:
        return self._state.config

    @property
    def logins(self) -> LoginTokens:
        return self._state.logins

    def _running(self) -> Core:
        if self.core is None:
            raise RuntimeError("this runs in `augure run`, not in `augure dashboard`")
        return self.core

    # -- conversation ----------------------------------------------------------------------

    async def converse(
        self,
        chat_id: str,
        content: Content,
        *,
        stream: TurnStream | None = None,
        turn_id: str | None = None,
        follow_ups: Sequence[Content] = (),
        received: Sequence[int] = (),
        later: Later | None = None,
    ) -> Reply:
        """`follow_ups`: messages that came after `content`, answered in the same turn.
        `received`: their ids from `receive`, out of the inbox once the turn is stored.
        `later`: what arrives while the turn runs, taken into it before a further call."""
        agent = self._running().agent
        return await agent.handle(
            chat_id,
            content,
            stream=stream,
            turn_id=turn_id,
            follow_ups=follow_ups,
            received=received,
            later=later,
        )

    async def receive(
        self,
        chat_id: str,
        content: Content,
        album: str | None = None,
        *,
        spoken: bool = False,
        delivery: tuple[int, str] | None = None,
    ) -> int:
        """A message taken in, stored before it waits to be answered (docs/reference/durability.md):
        its id goes to `converse` with it. Secrets are masked as in the history. `delivery`:
        the channel's id and digest of what brought it, recorded as taken with it."""
        clean = (
            self.clean(content) if isinstance(content, str) else self._state.redact.value(content)
        )
        inbox = Inbox(self._state.store.db)
        return await inbox.receive(chat_id, clean, album, spoken=spoken, delivery=delivery)

    async def taken_updates(self) -> set[tuple[int, str]]:
        """The deliveries recent runs took (a channel skips them when they come again)."""
        return await Inbox(self._state.store.db).taken_updates()

    async def record_update(self, delivery: tuple[int, str]) -> None:
        """A delivery handled without a message to store (a command, a refusal): taken."""
        await Inbox(self._state.store.db).record_update(delivery)

    async def park_updates(self, held: list[tuple[tuple[int, str], str]]) -> None:
        """Deliveries still being handled, with their bodies: kept until taken."""
        await Inbox(self._state.store.db).park(held)

    async def parked_updates(self) -> list[str]:
        """The bodies of deliveries a previous run parked and did not take."""
        return await Inbox(self._state.store.db).parked()

    async def waiting(self) -> list[Waiting]:
        """Messages a previous run took in and did not answer, in arrival order."""
        return await Inbox(self._state.store.db).waiting()

    async def dismiss(self, received: Sequence[int]) -> None:
        """Messages whose turn failed before it was stored; the owner was told instead."""
        await Inbox(self._state.store.db).dismiss(received)

    @staticmethod
    def new_turn_id() -> str:
        return new_id()

    async def preview_shown(self, turn_id: str, message_id: int, text: str) -> None:
        """A streamed preview is on screen: recorded, so a restart finishes it in place."""
        await self._state.store.turn_preview(turn_id, message_id, text)

    async def delivered(self, turn_id: str) -> None:
        await self._running().agent.delivered(turn_id)

    async def new_conversation(self, chat_id: str) -> None:
        await self._running().agent.new_conversation(chat_id)

    async def transcribe(self, audio: bytes, filename: str) -> str:
        return await self._running().models.transcribe(audio, filename)

    async def speak(self, chat_id: str, markdown: str) -> list[bytes] | None:
        """The answer as voice notes (docs/voice.md); None when it could not be spoken."""
        state = self._running()
        return await speak(state.llm, state.budget, self.config.voice, markdown)

    async def warm_up(self) -> None:
        await self._state.llm.warm_up()

    # -- approvals and rules ---------------------------------------------------------------

    async def decide(
        self,
        invocation_id: str,
        decision: Decision,
        by: str,
        *,
        reason: str | None = None,
        always: bool = False,
        in_chat: bool = False,
    ) -> Verdict | None:
        """Settles a pending request, as a button does; None when it was already decided."""
        return await self._state.gate.decide(
            invocation_id, decision, by, reason=reason, always=always, in_chat=in_chat
        )

    async def pending_approvals(self, limit: int = 100) -> list[dict[str, Any]]:
        return await self._state.audit.listing(approval_status="pending", limit=limit)

    async def invocation(self, invocation_id: str) -> dict[str, Any] | None:
        return await self._state.audit.get(invocation_id)

    async def invocations(self, filters: dict[str, str], cursor: str | None) -> InvocationPage:
        return await reports.invocations(self._state.store, filters, cursor)

    async def tool_names(self) -> list[str]:
        """Every tool with a record."""
        return await reports.tool_names(self._state.store)

    async def rules(self) -> list[Rule]:
        return await self._state.audit.rules()

    async def revoke_rule(self, rule_id: int) -> bool:
        return await self._state.audit.revoke_rule(rule_id)

    # -- jobs ------------------------------------------------------------------------------

    async def jobs(self) -> Jobs:
        scheduler = self._state.scheduler
        running = holder(self.config.home) is not None
        return Jobs(scheduler.zone, await scheduler.paused(), await scheduler.jobs(), running)

    async def pause_jobs(self, paused: bool) -> None:
        await self._state.scheduler.set_paused(paused)

    async def pause_job(self, job_id: str, paused: bool) -> bool:
        """False when there is no such job."""
        scheduler = self._state.scheduler
        try:
            await (scheduler.pause_job if paused else scheduler.resume_job)(job_id)
        except JobError:
            return False
        return True

    async def run_job_now(self, job_id: str, by: str) -> bool:
        return await self._state.scheduler.request_run(job_id, by)

    # -- background tasks ------------------------------------------------------------------

    async def tasks(
        self, *, chat_id: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[TaskRow]:
        return await self._state.tasks.tasks.list(limit=limit, offset=offset, chat_id=chat_id)

    async def task(self, task_id: str) -> TaskRow | None:
        return await self._state.tasks.tasks.get(task_id)

    def tasks_running_here(self) -> set[str]:
        """The tasks this process runs: only those can be cancelled from here."""
        return set(self._state.tasks.running())

    async def cancel_task(self, task_id: str) -> str:
        return await self._state.tasks.cancel(task_id)

    # -- personas, the dashboard's login ---------------------------------------------------

    def personas(self) -> list[str]:
        return self._personas().names()

    async def persona(self, chat_id: str) -> str | None:
        return await self._personas().active(chat_id)

    async def set_persona(self, chat_id: str, name: str | None) -> None:
        await self._personas().choose(chat_id, name)

    def _personas(self) -> Personas:
        personas = self._running().agent.personas
        assert personas is not None, "the core always builds the personas"
        return personas

    def login_link(self) -> str | None:
        """A one-time link to the dashboard; None when no dashboard serves."""
        return self._state.logins.login_url()

    def clean(self, text: str) -> str:
        """Secrets masked, as in every record shown."""
        return self._state.redact(text)

    # -- reports ---------------------------------------------------------------------------

    async def status(self) -> Status:
        core, state = self._running(), self._state
        jobs = await self.jobs()
        mcp = core.mcp.status_line()
        return Status(
            version=__version__,
            model=state.llm.model,
            uptime_seconds=int(time.time() - state.started_at),
            tools=[tool.name for tool in core.registry.list()],
            pending_approvals=len(await state.audit.listing(approval_status="pending")),
            paused=jobs.paused,
            jobs=jobs.jobs,
            zone=jobs.zone,
            limits=await core.executor.limits.usage(),
            mcp=state.redact(mcp) if mcp else None,  # a server's error may quote a secret
            fallback=core.models.last_fallback,
        )

    def uptime_seconds(self) -> int:
        return int(time.time() - self._state.started_at)

    def model(self) -> str:
        return self._state.llm.model

    async def usage(self, chat_id: str) -> Usage:
        store = self._state.store
        zone = ZoneInfo(self.config.zone)
        midnight = datetime.now(zone).replace(hour=0, minute=0, second=0, microsecond=0)
        return Usage(
            last=await store.last_usage(chat_id),
            today=await store.usage_totals(since=midnight.timestamp()),
            total=await store.usage_totals(),
        )

    async def spend(self) -> SpendReport:
        """Spend today and this month against the `[budget]` caps, by kind of work and model
        (read from state.db, so the dashboard beside the bot shows the same)."""
        return await SpendCaps(self.config, Ledger(self._state.store.db)).report()

    async def usage_per_day(self, days: int) -> list[Day]:
        return await reports.usage_per_day(self._state.store, ZoneInfo(self.config.zone), days)

    async def calls_today(self) -> int:
        midnight = reports.midnight(ZoneInfo(self.config.zone))
        return await reports.count_since(self._state.store, midnight.timestamp())

    def memory_files(self) -> list[tuple[str, int]]:
        return self._state.memory.list()

    def read_memory(self, path: str) -> str:
        """Raises MemoryPathError or an OSError for a path outside memory or missing."""
        return self._state.memory.read(path)

    def tools(self) -> list[Tool]:
        return self._running().registry.list()

    async def skills(self) -> list[tuple[SkillRecord, SkillMeta | None, str]]:
        """(record, metadata, last run) of every skill."""
        return list(await self._state.skills.files.listing())
