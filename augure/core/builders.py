"""The builders of the core's parts, each called once by `augure.core.app.build_core` in
dependency order; constructors are called with keywords."""

from __future__ import annotations

from augure.agent.loop import Agent
from augure.agent.personas import Personas
from augure.approval.gate import ApprovalGate
from augure.background import TaskManager
from augure.common.ports import Notifier
from augure.common.progress import Progress
from augure.config.settings import Config
from augure.core.runner import TurnRunner
from augure.core.spend import SpendCaps
from augure.host.secrets import Redactor
from augure.llm.models import ChatModel, Models
from augure.mcp.manager import McpManager
from augure.memory.store import MemoryStore
from augure.scheduler.heartbeat import Heartbeat
from augure.scheduler.runner import Scheduler
from augure.skills.model import Catalog
from augure.store.archive import Archive
from augure.store.audit import Audit
from augure.store.spend import Ledger
from augure.store.state import Store
from augure.tools.base import RunContext
from augure.tools.executor import Executor
from augure.tools.recall_vectors import Embedder, Indexer
from augure.tools.registry import ToolRegistry, enabled


def build_context(
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


def build_indexer(
    config: Config, store: Store, models: Models, memory: MemoryStore
) -> Indexer | None:
    """The archive's background embedding, only with `[recall] embeddings_model`."""
    if config.recall.embeddings_model is None:
        return None
    return Indexer(Embedder(models, config.recall), Archive(store.db), memory)


def build_budget(config: Config, store: Store, notifier: Notifier | None) -> SpendCaps:
    owner = config.owner_chat

    async def tell_owner(text: str) -> None:
        if notifier is not None and owner is not None:
            await notifier.send(owner, text)

    return SpendCaps(config, Ledger(store.db), tell_owner)


def build_agent(
    config: Config,
    store: Store,
    registry: ToolRegistry,
    executor: Executor,
    model: ChatModel,
    memory: MemoryStore,
    redact: Redactor,
    catalog: Catalog,
    mcp: McpManager,
    context: RunContext,
) -> Agent:
    return Agent(
        config=config,
        store=store,
        registry=registry,
        executor=executor,
        llm=model,
        memory=memory,
        redact=redact,
        context=context,
        catalog=catalog,
        personas=Personas(config.home, store),
        tools_ready=mcp.started,  # a turn waits for the MCP servers still starting up
    )


def build_scheduler(
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


def build_executor(
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


def build_heartbeat(
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
