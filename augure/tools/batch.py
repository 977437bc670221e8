"""`batch`: up to 25 tool calls in one, each through the executor's whole pipeline.

Every sub-call is `ctx.call(...)`: policy, approval, limits and an audit record naming the
batch as its parent, exactly as if the model had made it. They are started together: the
executor runs the concurrency-safe ones at once and queues the others behind its lock.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from augure.tools.base import RunContext, ToolResult, tool
from augure.tools.result import Artifact, relayed_source, render

NAME = "batch"
MAX_CALLS = 25
# Tools that are themselves ways of calling tools (or of changing which can be called):
# nested, they would escape the 25-call bound or change the request's tools mid-batch.
EXCLUDED = frozenset({NAME, "load_tools", "task", "execute_code"})


class SubCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any]


# Pydantic's own schema puts SubCall under "$defs" and a "$ref"; inline, and without what
# validation enforces anyway (no other keys, at least one call), it costs ~40 tokens less on
# every request.
CALLS_SCHEMA = {
    "type": "array",
    "maxItems": MAX_CALLS,
    "items": {
        "type": "object",
        "properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
        "required": ["tool", "arguments"],
    },
}


@tool(
    NAME,
    # Never behind the executor's lock for writes: its sub-calls take that lock one by one,
    # and holding it for the whole batch would deadlock the first write inside.
    safe=True,
    # Sub-calls may each wait for the owner's approval; each has its own timeout.
    timeout=3600.0,
    relays=True,  # sub-results may be outside content
)
async def batch(
    ctx: RunContext,
    calls: Annotated[
        list[SubCall], Field(min_length=1, max_length=MAX_CALLS), WithJsonSchema(CALLS_SCHEMA)
    ],
) -> ToolResult:
    """Run 1-25 independent tool calls at once; results come back numbered in order."""
    results = await asyncio.gather(*(_run(ctx, call) for call in calls))
    artifacts: list[Artifact] = []
    sources: set[str] = set()
    lines = []
    for number, (call, result) in enumerate(zip(calls, results, strict=True), 1):
        lines.append(f"[{number}] {call.tool}: {render(result)}")
        artifacts += result.artifacts
        if result.source is not None:
            sources.add(result.source)
    # Even cut into pages (read_output), no part of it may reach the model unmarked.
    return ToolResult.ok("\n".join(lines), artifacts, source=relayed_source(NAME, sources))


async def _run(ctx: RunContext, call: SubCall) -> ToolResult:
    if call.tool in EXCLUDED:
        return ToolResult.error(f"{call.tool} cannot run inside batch; call it directly")
    return await ctx.via(NAME).call(call.tool, call.arguments)
