"""Composition root: builds the core's parts once, unstarted; `augure.core.lifespan` starts and
stops them in one order, and channels reach them only through `augure.core.front`'s verbs.

See docs/architecture.md, "The composition root and the lifespan"."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from augure.agent.loop import Agent
from augure.agent.personas import Personas
from augure.agent.task import task_tool
from augure.approval.gate import ApprovalGate
from augure.background import TaskManager
from augure.background.manager import Report
from augure.background.tools import task_tools
from augure.codemode.tool import execute_code
from augure.common.logins import LoginTokens
from augure.common.ports import Approver, Notifier
from augure.common.progress import Progress
from augure.config.settings import Config
from augure.core.runner import TurnRunner
from augure.core.spend import SpendCaps
from augure.host.secrets import Redactor
from augure.llm.client import LLM
from augure.llm.models import ChatModel, Models, build_models
from augure.mcp.client import McpManager
from augure.memory.store import MemoryStore
from augure.scheduler.heartbeat import Heartbeat
from augure.scheduler.runner import Scheduler
from augure.skills.model import Catalog
from augure.skills.service import SkillService
from augure.skills.store import SkillStore
from augure.skills.tools import skill_tools
from augure.store.archive import Archive
from augure.store.audit import Audit
from augure.store.spend import Ledger
from augure.store.state import Store
from augure.store.tasks import Tasks
from augure.tools.base import RunContext, Tool
from augure.tools.batch import batch
from augure.tools.browser import browser
from augure.tools.calendar import calendar_tool
from augure.tools.clock import datetime_tool
from augure.tools.email import email_tool
from augure.tools.executor import Executor
from augure.tools.extras import available
from augure.tools.files import files
from augure.tools.github import github
from augure.tools.http import http_tool
from augure.tools.memory_tools import memory_read, memory_write
from augure.tools.meta import load_tools, read_output
from augure.tools.opencode import opencode
from augure.tools.recall import recall
from augure.tools.recall_vectors import Embedder, Indexer
from augure.tools.registry import ToolRegistry, enabled
from augure.tools.sandbox_exec import sandbox_exec
from augure.tools.schedule import schedule
from augure.tools.web_search import web_search

log = logging.getLogger(__name__)


def builtin_tools(config: Config) -> list[Tool]:
    return [
        datetime_tool,
        memory_read,
        memory_write,
        schedule,
        files,
        web_search,
        http_tool,
        email_tool,
        calendar_tool,
        github,
        browser,
        sandbox_exec,
        opencode,
        read_output,
        load_tools,
        batch,
        recall,
    ]


def build_registry(config: Config, extra: Sequence[Tool] = ()) -> ToolRegistry:
    registry = ToolRegistry()
    code = [execute_code] if config.code_mode.enabled else []
    listed: dict[str, Tool] = {}
    for tool in [*builtin_tools(config), *code, *extra]:
        if listed.get(tool.name) is tool:
            continue  # the same tool named twice (a deployment listing a built-in)
        listed[tool.name] = tool
        if enabled(tool.name, config):
            # A tool whose optional library is absent says which extra to install.
            registry.register(available(tool))
    return registry


@dataclass(kw_only=True)
class Core:
    """The built parts. Nothing here runs until `augure.core.lifespan` starts it."""

    config: Config
    store: Store
    memory: MemoryStore
    registry: ToolRegistry
    audit: Audit
    gate: ApprovalGate
    executor: Executor
    llm: LLM
    models: Models  # what every caller asks: budget, roles, fallbacks (docs/reference/spend.md)
    budget: SpendCaps
    agent: Agent
    redact: Redactor
    scheduler: Scheduler
    skills: SkillService
    heartbeat: Heartbeat
    mcp: McpManager
    tasks: TaskManager
    # Embeds the archive in the background; None without `[recall] embeddings_model`.
    indexer: Indexer | None = None
    started_at: float = field(default_factory=time.time)
    # The dashboard's one-time login tokens, issued by /dashboard and `augure dashboard`.
    logins: LoginTokens = field(default_factory=LoginTokens)


@dataclass(frozen=True)
class Wiring:
    """What a deployment plugs into the core: `extra_tools` adds tools; `model` replaces the
    HTTP model for turns (an in-process scripted one in tests); each of `approvers` is shown
    every approval request (none: such calls are rejected); `notifier` delivers what jobs,
    skills and background work produce outside a turn; `progress` shows long calls while
    they run (none: nothing is shown)."""

    extra_tools: Sequence[Tool] = ()
    model: ChatModel | None = None
    approvers: Sequence[Approver] = ()
    notifier: Notifier | None = None
    progress: Progress | None = None


def build_core(config: Config, store: Store, wiring: Wiring) -> Core:
    """Every part, built in dependency order and not started (the lifespan starts them)."""
    memory = MemoryStore(config.memory_dir)
    memory.ensure()
    redact = Redactor.from_config(config)
    registry = build_registry(config, wiring.extra_tools)
    audit = Audit(store)
    gate = ApprovalGate(audit, config.approval.timeout_seconds, wiring.approvers)
    budget = _budget(config, store, wiring.notifier)
    runner = TurnRunner(config=config, notifier=wiring.notifier, budget=budget)
    tasks = TaskManager(Tasks(store.db), runner.announce)
    mcp = McpManager(config.mcp, config.home / "logs" / "mcp", redact)
    executor = _executor(config, registry, audit, gate, redact, tasks, mcp, wiring.progress)
    scheduler = _scheduler(config, store, runner, wiring.notifier)
    llm = LLM(config.llm)
    model = build_models(config, llm, wiring.model or llm, budget)
    indexer = _indexer(config, store, model, memory)
    registry.set_context(
        _tools_context(config, memory, store, registry, scheduler, executor, indexer)
    )
    catalog = Catalog()
    agent = _agent(config, store, registry, executor, model, memory, redact, catalog, mcp)
    # The same catalog: the skills keep current what the agent's system prompt lists.
    skills = SkillService(
        config=config,
        store=store,
        registry=registry,
        run_turn=runner.skill_turn,
        catalog=catalog,
        scheduler=scheduler,
        llm=model,
    )
    runner.bind(agent=agent, skills=skills)
    _register_core_tools(config, registry, model, skills, tasks)
    heartbeat = _heartbeat(config, runner, agent, wiring.notifier)
    return Core(
        config=config,
        store=store,
        memory=memory,
        registry=registry,
        audit=audit,
        gate=gate,
        executor=executor,
        llm=llm,
        models=model,
        budget=budget,
        agent=agent,
        redact=redact,
        scheduler=scheduler,
        skills=skills,
        heartbeat=heartbeat,
        mcp=mcp,
        tasks=tasks,
        indexer=indexer,
    )


def _tools_context(
    config: Config,
    memory: MemoryStore,
    store: Store,
    registry: ToolRegistry,
    scheduler: Scheduler,
    executor: Executor,
    indexer: Indexer | None,
) -> RunContext:
    """What every tool may use; each call adds its own caller to it."""
    return RunContext(
        config=config,
        memory=memory,
        store=store,
        registry=registry,
        scheduler=scheduler,
        execute=executor.run,
        embed=indexer.embedder.embed if indexer else None,
    )


def _indexer(config: Config, store: Store, models: Models, memory: MemoryStore) -> Indexer | None:
    """The archive's background embedding, only with `[recall] embeddings_model`."""
    if config.recall.embeddings_model is None:
        return None
    return Indexer(Embedder(models, config.recall), Archive(store.db), memory)


def _budget(config: Config, store: Store, notifier: Notifier | None) -> SpendCaps:
    owner = config.owner_chat

    async def tell_owner(text: str) -> None:
        if notifier is not None and owner is not None:
            await notifier.send(owner, text)

    return SpendCaps(config, Ledger(store.db), tell_owner)


def _agent(
    config: Config,
    store: Store,
    registry: ToolRegistry,
    executor: Executor,
    model: ChatModel,
    memory: MemoryStore,
    redact: Redactor,
    catalog: Catalog,
    mcp: McpManager,
) -> Agent:
    return Agent(
        config=config,
        store=store,
        registry=registry,
        executor=executor,
        llm=model,
        memory=memory,
        redact=redact,
        catalog=catalog,
        personas=Personas(config.home, store),
        tools_ready=mcp.started,  # a turn waits for the MCP servers still starting up
    )


def _scheduler(
    config: Config, store: Store, runner: TurnRunner, notifier: Notifier | None
) -> Scheduler:
    return Scheduler(
        store=store,
        run_turn=runner.job,
        run_skill=runner.skill,
        default_zone=config.zone,
        misfire_grace_seconds=config.scheduler.misfire_grace_seconds,
        owner_chat=config.owner_chat,
        notifier=notifier,
    )


def _executor(
    config: Config,
    registry: ToolRegistry,
    audit: Audit,
    gate: ApprovalGate,
    redact: Redactor,
    tasks: TaskManager,
    mcp: McpManager,
    progress: Progress | None,
) -> Executor:
    def mcp_absent(name: str) -> str | None:
        # A tool `[tools]` leaves out stays unknown, whatever its server's state.
        return mcp.absent(name) if enabled(name, config) else None

    return Executor(
        registry=registry,
        audit=audit,
        gate=gate,
        config=config,
        redactor=redact,
        progress=progress,
        background=tasks.submit,
        absent=mcp_absent,
    )


def _register_core_tools(
    config: Config,
    registry: ToolRegistry,
    model: ChatModel,
    skills: SkillService,
    tasks: TaskManager,
) -> None:
    """The tools that need a built part: subagents, skills, background tasks."""
    # Offered only when an agent is configured; its subagents use the turns' model.
    task = task_tool(config.agents, model)
    if task is not None and enabled(task.name, config):
        registry.register(task)
    for skill_tool in skill_tools(skills):
        if enabled(skill_tool.name, config) and registry.get(skill_tool.name) is None:
            registry.register(skill_tool)
    for background_tool in task_tools(tasks):
        if enabled(background_tool.name, config):
            registry.register(background_tool)
    if not config.approval.enabled:
        log.warning(
            "APPROVAL IS DISABLED (approval.enabled = false): write and high-risk tool "
            "calls will run WITHOUT asking the owner. Use this only in a trusted lab."
        )


def _heartbeat(
    config: Config, runner: TurnRunner, agent: Agent, notifier: Notifier | None
) -> Heartbeat:
    return Heartbeat(
        settings=config.heartbeat,
        checklist=config.memory_dir / config.heartbeat.checklist,
        zone=config.zone,
        owner_chat=config.owner_chat,
        run_turn=runner.heartbeat,
        busy=agent.busy,
        deliver=notifier.send if notifier is not None else None,
    )


@dataclass(frozen=True)
class SkillFiles:
    files: SkillStore


@dataclass(kw_only=True)
class Standalone:
    """What `augure dashboard` serves from: the home's state, and nothing that runs.

    The command may run beside a bot (`augure run`) on the same home, so it builds no agent,
    no tools, no MCP servers and no skill watcher, and never starts the scheduler or the
    heartbeat: the bot does all of that. Every action reaches the bot through state.db, the
    way the CLI's do: a decision is a conditional UPDATE the bot's gate polls for (`augure
    approve`), "Run now" and the pauses are rows its scheduler reads at each tick (`augure
    jobs`). A background task can be stopped only by the process running it, so the tasks
    page refuses it here. See docs/reference/dashboard.md."""

    config: Config
    store: Store
    memory: MemoryStore
    audit: Audit
    gate: ApprovalGate
    scheduler: Scheduler
    skills: SkillFiles
    tasks: TaskManager
    llm: LLM  # read for its model's name only: this process never calls it
    redact: Redactor
    started_at: float = field(default_factory=time.time)
    logins: LoginTokens = field(default_factory=LoginTokens)

    @classmethod
    async def open(cls, config: Config, started_at: float | None = None) -> Standalone:
        """`started_at`: when the bot beside it started (its uptime is the one shown)."""
        memory = MemoryStore(config.memory_dir)
        memory.ensure()
        store = await Store.open(config.db_path)
        audit = Audit(store)

        async def runs_in_the_bot(*_: object) -> str:
            raise RuntimeError("jobs and tasks run in `augure run`, not in `augure dashboard`")

        async def nothing_to_announce(report: Report) -> None:
            raise RuntimeError("no background task runs in `augure dashboard`")

        return cls(
            config=config,
            store=store,
            memory=memory,
            audit=audit,
            # No approver: this process makes no call that waits for a decision, it only
            # writes decisions, which the bot's gate picks up from state.db.
            gate=ApprovalGate(audit, config.approval.timeout_seconds),
            scheduler=Scheduler(
                store=store,
                run_turn=runs_in_the_bot,
                default_zone=config.zone,
                misfire_grace_seconds=config.scheduler.misfire_grace_seconds,
                owner_chat=config.owner_chat,
            ),
            skills=SkillFiles(SkillStore(config.skills.path or config.home / "skills", store)),
            tasks=TaskManager(Tasks(store.db), nothing_to_announce),
            llm=LLM(config.llm),
            redact=Redactor.from_config(config),
            started_at=time.time() if started_at is None else started_at,
        )

    async def close(self) -> None:
        await self.llm.close()
        await self.store.close()
