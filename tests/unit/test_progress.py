"""Stateful tools' progress lines: the async-generator form, and what a line may show."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from augure.approval.gate import ApprovalGate
from augure.common.progress import LINE_CHARS, StatusBoard, clean_line
from augure.config.settings import load_config
from augure.host.secrets import Redactor
from augure.memory.store import MemoryStore
from augure.store.audit import Audit
from augure.store.state import Store
from augure.tools.base import RunContext, Tool, ToolResult, tool
from augure.tools.executor import Executor
from augure.tools.registry import ToolRegistry

SECRET = "hunter2-secret-token-value"
closed: list[str] = []


@tool("steps", mode="stateful")
async def steps(ctx: RunContext, count: int) -> AsyncIterator[str | ToolResult]:
    """Yields a progress line per step, then its result."""
    try:
        for n in range(1, count + 1):
            yield f"step {n}/{count}"
        yield "\x1b[31mkey " + SECRET + "\x1b[0m"
        yield ToolResult.ok(f"{count} steps done")
        yield "never seen: nothing runs after the result"
    finally:
        closed.append("steps")


@tool("no_result")
async def no_result(ctx: RunContext) -> AsyncIterator[str | ToolResult]:
    """Yields only progress."""
    yield "working"


@pytest.fixture
async def context(tmp_path: Path) -> AsyncIterator[RunContext]:
    config = load_config(home=tmp_path)
    store = await Store.open(tmp_path / "state.db")
    registry = ToolRegistry()
    registry.register(steps)
    registry.register(no_result)
    audit = Audit(store)
    executor = Executor(registry, audit, ApprovalGate(audit, 1), config, Redactor({"k": SECRET}))
    memory = MemoryStore(tmp_path / "memory")
    yield RunContext(config, memory, store, registry=registry, execute=executor.run)
    await store.close()


async def test_a_generator_tool_reports_its_lines_and_returns_its_result(
    context: RunContext,
) -> None:
    heard: list[str] = []
    listening = RunContext(
        context.config, context.memory, context.store, execute=context.execute, report=heard.append
    )
    result = await listening.call("steps", {"count": 2})
    assert result.success and result.output == "2 steps done"
    # Through the executor: each line cleaned of terminal escapes and redacted, and the
    # caller's own sink (a background task's) still hears them.
    assert heard == ["step 1/2", "step 2/2", "key [REDACTED:k]"]
    assert closed == ["steps"]  # the generator was closed at its result


async def test_a_generator_tool_without_a_result_is_an_error(context: RunContext) -> None:
    assert no_result.running.mode == "stateful"  # the generator form is one
    result = await context.call("no_result", {})
    assert not result.success and result.content == "no_result ended without a result"


def test_a_line_shows_no_control_characters_and_no_secret_even_when_cut() -> None:
    def redact(text: str) -> str:
        return text.replace(SECRET, "[REDACTED]")

    line = "x" * (LINE_CHARS - 5) + SECRET + "\r\n\tmore\u202e"
    shown = clean_line(line, redact)
    # Redacted before the cut: no prefix of the secret survives it.
    assert len(shown) == LINE_CHARS and shown.endswith("x[RED…")
    assert "hunter" not in shown and "h" not in shown
    assert clean_line("a\x00b\x1b[2Kc\u2066d\x1b]0;title\x07", redact) == "a bc d"


class HeldSurface:
    """A chat surface whose first edit is held until the test lets it through."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.editing = asyncio.Event()
        self.shown: dict[int, str] = {}

    def accepts(self, chat_id: str) -> bool:
        return True

    async def post(self, chat_id: str, text: str) -> int:
        self.shown[1] = text
        return 1

    async def replace(self, chat_id: str, message_id: int, text: str) -> None:
        self.editing.set()
        await self.release.wait()
        self.shown[message_id] = text


async def until(condition: Callable[[], bool]) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never happened")


async def test_a_call_shown_while_the_last_outcome_is_being_sent_is_kept_up_to_date() -> None:
    surface = HeldSurface()
    board = StatusBoard(surface, threshold=0.0, interval=0.01, clock=lambda: 0.0)
    board.started("a", "1", "first")
    await until(lambda: 1 in surface.shown)
    board.ended("a", "done")
    await surface.editing.wait()  # a's outcome is on its way: the message looked finished
    board.started("b", "1", "second")
    await asyncio.sleep(0.05)  # b passes its threshold: its line joins the same message
    surface.release.set()
    await until(lambda: "second" in surface.shown[1])
    board.ended("b", "failed")
    await until(lambda: "failed" in surface.shown[1])
    assert surface.shown[1] == "✓ first — done in 0 s\n✗ second — failed after 0 s"
    await board.close()


async def test_a_tool_built_directly_from_a_generator_runs_too(context: RunContext) -> None:
    async def count(ctx: RunContext, count: int) -> AsyncIterator[str | ToolResult]:
        yield "one"
        yield ToolResult.ok("counted")

    built = Tool("count", "Counts.", steps.model, cast(Any, count))
    heard: list[str] = []
    listening = RunContext(context.config, context.memory, context.store, report=heard.append)
    result = await built.invoke(built.arguments_model.model_validate({"count": 1}), listening)
    assert (result.content, heard) == ("counted", ["one"])
