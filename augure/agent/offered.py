"""The tool schemas a turn offers the model."""

from __future__ import annotations

from typing import Any

from augure.codemode.tool import code_mode_schema
from augure.tools.registry import ToolRegistry


def offered_schemas(
    registry: ToolRegistry, code_mode: bool, loaded: set[str], allowed: frozenset[str] | None
) -> list[dict[str, Any]]:
    """`loaded`: deferred tools the turn loaded; `allowed`: a skill's declared tools."""
    if allowed is not None:  # a skill's turn: its declared tools, loaded or not
        return [registry.schema(t) for t in registry.list() if t.name in allowed]
    # Code mode offers one tool whose description carries every tool as a typed `api.*`
    # function: one model call can then chain several tools.
    if code_mode:
        return [code_mode_schema(registry)]
    return registry.to_function_schemas(loaded)
