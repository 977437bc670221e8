"""The catalogue of tools: what exists, its schemas and descriptions. It runs nothing; calls go
through the executor, which depends on this module and never the other way."""

from __future__ import annotations

import builtins
from collections.abc import Collection, Iterable, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from augure.tools.base import Tool

if TYPE_CHECKING:
    from augure.config.settings import Config


class ToolRegistry:
    """`config`: what a tool's description checks it has (none: nothing is checked). The
    context a call runs in is not kept here: each caller is handed its own."""

    def __init__(self, config: Config | None = None) -> None:
        self.config = config
        self._tools: dict[str, Tool] = {}
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

    def description(self, tool: Tool) -> str:
        missing = tool.config_check(self.config) if self.config is not None else None
        return f"{tool.description} [NOT CONFIGURED] {missing}" if missing else tool.description

    def schema(self, tool: Tool) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": self.description(tool),
                "parameters": tool.parameters,
            },
        }

    def to_function_schemas(self, loaded: Iterable[str] = ()) -> builtins.list[dict[str, Any]]:
        """Schemas of the tools sent with every request, plus deferred ones already loaded."""
        # Built once: the schemas are the largest stable part of every request.
        if self._schemas is None:
            self._schemas = [self.schema(t) for t in self._tools.values() if not t.deferred]
        extra = [self.schema(self._tools[name]) for name in loaded if name in self._tools]
        return self._schemas + [s for s in extra if s not in self._schemas]

    def deferred(self, allowed: Collection[str] | None = None) -> builtins.list[Tool]:
        """The deferred tools, within `allowed` when given (a guest's chat, a skill's turn)."""
        return [t for t in self._within(allowed) if t.deferred]

    def hints(self, allowed: Collection[str] | None = None) -> builtins.list[str]:
        return [f"{t.name}: {t.hint}" for t in self._within(allowed) if t.hint]

    def _within(self, allowed: Collection[str] | None) -> builtins.list[Tool]:
        tools = self._tools.values()
        return [t for t in tools if allowed is None or t.name in allowed]


def enabled(name: str, config: Config) -> bool:
    tools = config.tools
    allowed = any(fnmatchcase(name, pattern) for pattern in tools.enabled)
    return allowed and not any(fnmatchcase(name, pattern) for pattern in tools.disabled)


def outside_sources(messages: Sequence[dict[str, Any]], registry: ToolRegistry) -> list[str]:
    """Tools called in `messages` whose results bring (or pass on) outside content: text
    derived from these messages, such as a summary, must stay marked untrusted."""
    called = {
        call["function"]["name"]
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    }
    return [name for name in sorted(called) if brings_outside(registry, name)]


def brings_outside(registry: ToolRegistry, name: str) -> bool:
    """A tool whose results bring (or pass on) outside content; unknown: assume the worst."""
    tool = registry.get(name)
    return tool is None or tool.untrusted or tool.relays
