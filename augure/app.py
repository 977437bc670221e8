"""Composition root: builds the core once; channels receive it and never build parts."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from augure.agent.llm import LLM
from augure.agent.loop import Agent
from augure.config import Config
from augure.memory.store import MemoryStore
from augure.store.db import Store
from augure.tools.base import RunContext, Tool
from augure.tools.clock import datetime_tool
from augure.tools.memory_tools import memory_read, memory_write
from augure.tools.registry import ToolRegistry, enabled

log = logging.getLogger(__name__)


def builtin_tools() -> list[Tool]:
    return [datetime_tool, memory_read, memory_write]


def build_registry(config: Config) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in builtin_tools():
        if enabled(tool.name, config):
            registry.register(tool)
    return registry


@dataclass
class Core:
    config: Config
    store: Store
    memory: MemoryStore
    registry: ToolRegistry
    llm: LLM
    agent: Agent
    started_at: float = field(default_factory=time.time)

    @classmethod
    async def open(cls, config: Config) -> Core:
        config.home.mkdir(parents=True, exist_ok=True)
        memory = MemoryStore(config.memory_dir)
        memory.ensure()
        store = await Store.open(config.db_path)
        registry = build_registry(config)
        registry.set_context(RunContext(config=config, memory=memory, store=store))
        llm = LLM(config.llm)
        agent = Agent(config, store, registry, llm, memory)
        return cls(config, store, memory, registry, llm, agent)

    async def close(self) -> None:
        await self.llm.close()
        await self.store.close()
