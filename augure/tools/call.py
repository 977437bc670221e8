"""One tool call on its way through the executor's pipeline, and the shapes of its steps."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from augure.store.audit import Rule
from augure.tools.base import RunContext, Tool
from augure.tools.result import ErrorKind, ToolResult


@dataclasses.dataclass
class Call:
    """One call on its way through the pipeline; each step fills in what it decides.

    Its arguments go by one name per stage: `sent` as the model wrote them (JSON text or an
    object), `raw` once parsed (the `background` flag taken off), `arguments` once validated
    against the tool's model, `shown` as an approval request or a task row shows them
    (redacted)."""

    name: str
    sent: str | dict[str, Any]
    ctx: RunContext
    tool: Tool | None = None
    background: bool = False  # asked to be released from the turn (docs/background.md)
    raw: dict[str, Any] = dataclasses.field(default_factory=dict)
    arguments: Any = None
    asking: bool = False  # needs the owner's approval unless a rule covers it
    shown: dict[str, Any] = dataclasses.field(default_factory=dict)
    target: str | None = None
    rule: Rule | None = None
    preview: dict[str, Any] | None = None
    invocation: str = ""  # the audit record, from the policy step on
    digest: str | None = None  # of what the approval request showed
    profile_asks: bool = False  # a profile requires approval (it can add it, never remove)
    reserved: tuple[int, ...] = ()  # limit counts taken; given back if the call does not run
    granted: bool = False  # allowed by `Allow in this chat` for this caller's chat
    # What the call sends out to a place (`Approval.leaves`), from the egress step on.
    leaving: list[str] = dataclasses.field(default_factory=list)
    # Could carry data out after outside content: why it asks, as the request shows it.
    leak: dict[str, Any] | None = None
    refused: str | None = None  # the preview's refusal: the call ends unasked

    @property
    def the_tool(self) -> Tool:
        assert self.tool is not None, "the parse step sets the tool"
        return self.tool


Gate = Callable[[Call], Awaitable[ToolResult | None]]
Finish = Callable[[Call, ToolResult], Awaitable[ToolResult]]
# A released call's remaining pipeline; it calls `started(invocation)` just before the tool
# runs, so the background task knows which audit record is its own.
Started = Callable[[str], Awaitable[None]]
Work = Callable[[Started], Coroutine[Any, Any, ToolResult]]
# Takes a released call and its work; returns the background task's id.
Submit = Callable[[Call, Work], Awaitable[str]]


def parsed(name: str, sent: str | dict[str, Any]) -> dict[str, Any] | ToolResult:
    """The arguments as one JSON object, or the error the model gets."""
    if isinstance(sent, dict):
        return sent
    try:
        raw = json.loads(sent or "{}")
    except json.JSONDecodeError as exc:
        return ToolResult.error(
            f"arguments for {name} are not valid JSON ({exc.msg})", ErrorKind.INVALID_CALL
        )
    if not isinstance(raw, dict):
        error = f"arguments for {name} must be a JSON object"
        return ToolResult.error(error, ErrorKind.INVALID_CALL)
    return raw
