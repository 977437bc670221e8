"""Tools about tools: paging through a cut result, and loading deferred tool schemas."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from augure.tools.base import RunContext, ToolResult, tool
from augure.tools.outputs import OUTPUT_LIMIT, output_file, source_file


@tool("read_output", relays=True, deferred=True)  # only after a cut result
async def read_output(
    ctx: RunContext,
    id: Annotated[str, Field(pattern=r"^[0-9a-f]{8}$", description="id from the cut marker")],
    offset: Annotated[int, Field(ge=0)] = 0,
    length: Annotated[int, Field(ge=1, le=OUTPUT_LIMIT)] = OUTPUT_LIMIT,
) -> ToolResult:
    """Read more of a cut tool result."""
    outputs = ctx.home / "outputs"
    path = output_file(outputs, id)
    if not path.is_file():
        return ToolResult.error(f"no saved output {id!r}")
    text = path.read_text(encoding="utf-8")
    piece = text[offset : offset + length]
    end = offset + len(piece)
    more = f" Read on with offset={end}." if end < len(text) else " That is the end."
    result = ToolResult.ok(f"{piece}\n\n[Characters {offset}–{end} of {len(text)}.{more}]")
    # Outside content read back is still outside content: the executor marks it again.
    source = source_file(outputs, id)
    if source.is_file():
        result.source = source.read_text(encoding="utf-8").strip() or "unknown"
    return result


@tool("load_tools")
async def load_tools(
    ctx: RunContext,
    names: Annotated[list[str], Field(min_length=1)],
) -> ToolResult:
    """Load the schemas of tools listed under More tools."""
    registry = ctx.registry
    unknown = [n for n in names if registry is None or registry.get(n) is None]
    if unknown:
        return ToolResult.error(f"no such tools: {', '.join(unknown)}")
    loaded = f"Loaded: {', '.join(names)}. You can call them now."
    return ToolResult.ok(loaded, loaded=frozenset(names))
