"""The tool list: the built-in tools, and the registry a config enables from them and from
the parts that offer tools of their own (subagents, skills, background tasks)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from augure.agent.task import task_tool
from augure.background import TaskManager
from augure.background.tools import task_tools
from augure.codemode.tool import execute_code
from augure.config.settings import Config
from augure.llm.models import ChatModel
from augure.skills.service import SkillService
from augure.skills.tools import skill_tools
from augure.tools.base import Tool
from augure.tools.batch import batch
from augure.tools.browser import browser
from augure.tools.calendar import calendar_tool
from augure.tools.clock import datetime_tool
from augure.tools.email import email_tool
from augure.tools.extras import available
from augure.tools.files import files
from augure.tools.github import github
from augure.tools.http import http_tool
from augure.tools.memory_tools import memory_read, memory_write
from augure.tools.meta import load_tools, read_output
from augure.tools.opencode import opencode
from augure.tools.recall import recall
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
    registry = ToolRegistry(config)
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


def register_core_tools(
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
