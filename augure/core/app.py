"""Composition root: builds the core's parts once, unstarted; `augure.core.lifespan` starts and
stops them in one order, and channels reach them only through the door (`augure.core.door`).
The tool list is `augure.core.toolset`, each part's builder `augure.core.builders`, the turns
jobs, skills, background reports and the heartbeat run `augure.core.runner`.

See docs/architecture.md, "The composition root and the lifespan"."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from augure.agent.loop import Agent
from augure.approval.gate import ApprovalGate
from augure.background import TaskManager
from augure.common.logins import LoginTokens
from augure.common.ports import Approver, Notifier
from augure.common.progress import Progress
from augure.config.settings import Config
from augure.core import builders
from augure.core.runner import TurnRunner
from augure.core.spend import SpendCaps
from augure.core.toolset import build_registry, register_core_tools
from augure.host.secrets import Redactor
from augure.llm.client import LLM
from augure.llm.models import ChatModel, Models, build_models
from augure.mcp.manager import McpManager
from augure.memory.store import MemoryStore
from augure.scheduler.heartbeat import Heartbeat
from augure.scheduler.runner import Scheduler
from augure.skills.model import Catalog
from augure.skills.service import SkillService
from augure.skills.store import SkillStore
from augure.store.audit import Audit
from augure.store.state import Store
from augure.store.tasks import Tasks
from augure.tools.base import RunContext, Tool
from augure.tools.executor import Executor
from augure.tools.recall_vectors import Indexer
from augure.tools.registry import ToolRegistry


@dataclass(kw_only=True)
class Core:
    """The built parts. Nothing here runs until `augure.core.lifespan` starts it."""

    config: Config
    store: Store
    memory: MemoryStore
    registry: ToolRegistry
    # What every tool may use, handed to whoever makes calls; each call adds its caller.
    context: RunContext
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

    @property
    def skill_files(self) -> SkillStore:
        return self.skills.files


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
    budget = builders.build_budget(config, store, wiring.notifier)
    runner = TurnRunner(config=config, notifier=wiring.notifier, budget=budget)
    tasks = TaskManager(Tasks(store.db), runner.announce)
    mcp = McpManager(config.mcp, config.home / "logs" / "mcp", redact)
    executor = builders.build_executor(
        config, registry, audit, gate, redact, tasks, mcp, wiring.progress
    )
    scheduler = builders.build_scheduler(config, store, runner, wiring.notifier)
    llm = LLM(config.llm)
    model = build_models(config, llm, wiring.model or llm, budget)
    indexer = builders.build_indexer(config, store, model, memory)
    context = builders.build_context(config, memory, store, registry, scheduler, executor, indexer)
    catalog = Catalog()
    agent = builders.build_agent(
        config, store, registry, executor, model, memory, redact, catalog, mcp, context
    )
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
    runner.bind(agent=agent, skills=skills, context=context)
    register_core_tools(config, registry, model, skills, tasks)
    heartbeat = builders.build_heartbeat(config, runner, agent, wiring.notifier)
    return Core(
        config=config,
        store=store,
        memory=memory,
        registry=registry,
        context=context,
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
