"""The set of tools the agent can call, and the single door through which a call passes."""

from __future__ import annotations

import builtins
import json
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from augure.tools.base import RunContext, Tool, ToolResult

if TYPE_CHECKING:
    from augure.config import Config


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._context: RunContext | None = None
        self._schemas: builtins.list[dict[str, Any]] | None = None

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self._tools[tool.name] = tool
        self._schemas = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def list(self) -> list[Tool]:
        return list(self._tools.values())

    def set_context(self, ctx: RunContext) -> None:
        self._context = ctx
        self._schemas = None

    @property
    def context(self) -> RunContext:
        if self._context is None:
            raise RuntimeError("ToolRegistry.set_context was never called")
        return self._context

    def description(self, tool: Tool) -> str:
        missing = tool.config_check(self.context.config)
        return f"{tool.description} [NOT CONFIGURED] {missing}" if missing else tool.description

    def to_function_schemas(self) -> builtins.list[dict[str, Any]]:
        # Built once: the schemas are the largest stable part of every request.
        if self._schemas is None:
            self._schemas = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": self.description(tool),
                        "parameters": tool.parameters,
                    },
                }
                for tool in self._tools.values()
            ]
        return self._schemas

    def hints(self) -> builtins.list[str]:
        return [f"{t.name}: {t.hint}" for t in self._tools.values() if t.hint]

    async def execute(
        self, name: str, arguments: str | dict[str, Any], ctx: RunContext | None = None
    ) -> ToolResult:
        """Run one call. Never raises: every failure is a result the model can read."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools))
            return ToolResult.error(f"unknown tool {name!r}; available tools: {known}")
        if isinstance(arguments, str):
            try:
                parsed = json.loads(arguments or "{}")
            except json.JSONDecodeError as exc:
                return ToolResult.error(f"arguments for {name} are not valid JSON ({exc.msg})")
            if not isinstance(parsed, dict):
                return ToolResult.error(f"arguments for {name} must be a JSON object")
            arguments = parsed
        context = ctx or self.context
        result = await tool.execute(arguments, context)
        return redact(result, context.config)


def enabled(name: str, config: Config) -> bool:
    tools = config.tools
    allowed = any(fnmatchcase(name, pattern) for pattern in tools.enabled)
    return allowed and not any(fnmatchcase(name, pattern) for pattern in tools.disabled)


def redact_text(text: str, config: Config) -> str:
    for secret_name, value in config.secrets().items():
        if len(value) >= 4:
            text = text.replace(value, f"[REDACTED:{secret_name}]")
    return text


def redact(result: ToolResult, config: Config) -> ToolResult:
    result.output = redact_text(result.output, config)
    return result
