"""Composition root: builds the core once; channels receive it and never build parts."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from augure.agent.loop import Agent
from augure.agent.task import task_tool
from augure.agent.turn import ChatModel
from augure.approval.gate import ApprovalGate, Approver
from augure.background import TaskManager
from augure.background.manager import Report
from augure.background.tools import task_tools
from augure.codemode.tool import execute_code
from augure.config import Config
from augure.heartbeat import Heartbeat
from augure.llm import LLM
from augure.logins import LoginTokens
from augure.mcp.adapter import register as register_mcp_tools
from augure.mcp.client import McpManager
from augure.memory.store import MemoryStore
from augure.personas import Personas
from augure.progress import Progress
from augure.scheduler.service import Notifier, Scheduler
from augure.secrets import Redactor
from augure.skills.model import Catalog
from augure.skills.service import SkillService
from augure.skills.tools import skill_tools
from augure.store.audit import Audit
from augure.store.db import Store
from augure.store.tasks import Tasks
from augure.tools import browser as browser_module
from augure.tools.base import Artifact, RunContext, Tool
from augure.tools.batch import batch
from augure.tools.browser import browser
from augure.tools.clock import datetime_tool
from augure.tools.email import email_tool
from augure.tools.executor import Executor
from augure.tools.extras import available
from augure.tools.files import files
from augure.tools.github import github
from augure.tools.http import http_tool
from augure.tools.memory_tools import memory_read, memory_write
from augure.tools.meta import load_tools, read_output
from augure.tools.registry import ToolRegistry, enabled
from augure.tools.sandbox_exec import opencode, sandbox_exec
from augure.tools.schedule import schedule
from augure.tools.web_search import web_search

log = logging.getLogger(__name__)


@runtime_checkable
class FileNotifier(Notifier, Protocol):
    """A notifier that also delivers files (every channel does; a test's outbox may not)."""

    async def deliver(self, chat_id: str, artifact: Artifact) -> None: ...


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
        github,
        browser,
        sandbox_exec,
        opencode,
        read_output,
        load_tools,
        batch,
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


@dataclass
class Core:
    config: Config
    store: Store
    memory: MemoryStore
    registry: ToolRegistry
    audit: Audit
    gate: ApprovalGate
    executor: Executor
    llm: LLM
    agent: Agent
    redact: Redactor
    scheduler: Scheduler
    skills: SkillService
    heartbeat: Heartbeat  # started with the scheduler, by `augure run`
    started_at: float = field(default_factory=time.time)
    mcp: McpManager | None = None
    tasks: TaskManager | None = None
    # The dashboard's one-time login tokens, issued by /dashboard and `augure dashboard`.
    logins: LoginTokens = field(default_factory=LoginTokens)

    @classmethod
    async def open(
        cls,
        config: Config,
        extra_tools: Sequence[Tool] = (),
        model: ChatModel | None = None,
        *,
        approvers: Sequence[Approver] = (),
        notifier: Notifier | None = None,
        progress: Progress | None = None,
    ) -> Core:
        """Build everything but the channels' inbound sides. `extra_tools` is how a deployment
        adds tools; `model` replaces the HTTP model for turns (an in-process scripted one in
        tests). Each of `approvers` is shown every approval request (none: such calls are
        rejected); `notifier` delivers what jobs and skills produce outside a turn;
        `progress` shows long calls while they run (none: nothing is shown)."""
        config.home.mkdir(parents=True, exist_ok=True)
        memory = MemoryStore(config.memory_dir)
        memory.ensure()
        store = await Store.open(config.db_path)
        redact = Redactor.from_config(config)
        registry = build_registry(config, extra_tools)
        audit = Audit(store)
        gate = ApprovalGate(audit, config.approval.timeout_seconds, approvers)

        # A background task's result comes back as a turn of its own in its chat
        # (docs/reference/execution.md#background-work),
        # for the caller that released it and with its tools, delivered like a chat turn:
        # its text, then the task's files and the turn's own.
        async def announce(report: Report) -> None:
            chat_id = report.chat_id
            reply = await agent.handle(
                chat_id,
                report.content,
                origin=report.chain,
                tools=report.tools,
                asked_from=report.source,
            )
            if notifier is not None:
                await notifier.send(chat_id, reply.text)
                if isinstance(notifier, FileNotifier):
                    for artifact in [*report.files, *reply.artifacts]:
                        await notifier.deliver(chat_id, artifact)

        tasks = TaskManager(Tasks(store.db), announce)
        mcp = McpManager(config.mcp, config.home / "logs" / "mcp", redact)

        def mcp_absent(name: str) -> str | None:
            # A tool `[tools]` leaves out stays unknown, whatever its server's state.
            return mcp.absent(name) if enabled(name, config) else None

        executor = Executor(
            registry,
            audit,
            gate,
            config,
            redact,
            progress=progress,
            background=tasks.submit,
            absent=mcp_absent,
        )

        # The jobs' runners reach the agent and the skills built below, when a job runs.
        async def run_job(conversation: str, prompt: str, chain: tuple[str, ...]) -> str:
            # Each run starts a fresh conversation: a job's output is delivered to the owner,
            # never fed back as user input, and never piles up across runs.
            await agent.new_conversation(conversation)
            return (await agent.handle(conversation, prompt, origin=chain)).text

        async def run_skill(skill_id: str, chain: tuple[str, ...]) -> str:
            return await skills.run_scheduled(skill_id, chain)

        async def run_skill_turn(
            conversation: str, prompt: str, tools: Collection[str], chain: tuple[str, ...]
        ) -> str:
            # A fresh conversation each run, limited to the skill's declared tools.
            await agent.new_conversation(conversation)
            return (await agent.handle(conversation, prompt, origin=chain, tools=tools)).text

        scheduler = Scheduler(
            store,
            run_job,
            default_zone=config.zone,
            misfire_grace_seconds=config.scheduler.misfire_grace_seconds,
            owner_chat=config.owner_chat,
            run_skill=run_skill,
            notifier=notifier,
        )
        registry.set_context(
            RunContext(
                config=config,
                memory=memory,
                store=store,
                registry=registry,
                scheduler=scheduler,
                execute=executor.run,
            )
        )
        if not config.approval.enabled:
            log.warning(
                "APPROVAL IS DISABLED (approval.enabled = false): write and high-risk tool "
                "calls will run WITHOUT asking the owner. Use this only in a trusted lab."
            )
        llm = LLM(config.llm)
        catalog = Catalog()
        personas = Personas(config.home, store)
        agent = Agent(
            config,
            store,
            registry,
            executor,
            model or llm,
            memory,
            redact,
            catalog,
            personas,
            tools_ready=mcp.started,
        )
        # Offered only when an agent is configured; its subagents use the turns' model.
        task = task_tool(config.agents, model or llm)
        if task is not None and enabled(task.name, config):
            registry.register(task)
        # Skills: their tools need the service, which needs the agent and the scheduler.
        skills = SkillService(config, store, registry, run_skill_turn, catalog, scheduler, llm)
        for skill_tool in skill_tools(skills):
            if enabled(skill_tool.name, config) and registry.get(skill_tool.name) is None:
                registry.register(skill_tool)
        for background_tool in task_tools(tasks):
            if enabled(background_tool.name, config):
                registry.register(background_tool)
        await skills.install_bundled()
        skills.watch()
        heartbeat = _heartbeat(config, agent, notifier)
        # MCP servers start in the background: their tools appear as each server is ready; a
        # turn waits for those still starting up to `[mcp] startup_timeout_seconds`.
        mcp.start(lambda server, listed: register_mcp_tools(registry, config, server, listed))
        return cls(
            config,
            store,
            memory,
            registry,
            audit,
            gate,
            executor,
            llm,
            agent,
            redact,
            scheduler,
            skills,
            heartbeat,
            mcp=mcp,
            tasks=tasks,
        )

    async def close(self) -> None:
        if self.tasks is not None:
            await self.tasks.close()
        if self.mcp is not None:
            await self.mcp.close()
        await self.heartbeat.stop()
        await self.scheduler.stop()
        await self.skills.close()
        await self.gate.close()
        await browser_module.shutdown()
        await self.llm.close()
        await self.store.close()


class Companion(Approver, Protocol):
    """Served in the bot's process beside Telegram (the dashboard): built before the core as
    one of its approvers, started once the bot is, stopped before the core closes."""

    async def start(self, core: Core) -> None: ...

    async def stop(self) -> None: ...


HEARTBEAT_CHAT = "heartbeat"


def _heartbeat(config: Config, agent: Agent, notifier: Notifier | None) -> Heartbeat:
    owner = config.owner_chat

    async def run_turn(prompt: str) -> str:
        assert owner is not None
        # Under the owner chat's lock, so it never overlaps a turn there; in a fresh
        # conversation of its own, so its checks do not pile up in the owner's history.
        async with agent.lock(owner):
            await agent.new_conversation(HEARTBEAT_CHAT)
            return (await agent.handle(HEARTBEAT_CHAT, prompt, origin="heartbeat")).text

    return Heartbeat(
        config.heartbeat,
        config.memory_dir / config.heartbeat.checklist,
        config.zone,
        owner,
        run_turn,
        agent.busy,
        notifier.send if notifier is not None else None,
    )
