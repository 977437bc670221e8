"""Streaming dispatch through the real bot: a tool call starts as soon as its arguments are
complete in the model's stream, and the results still go back in the model's order."""

from __future__ import annotations

import asyncio
import json
import math
import time

import pytest

from augure.tools.base import Egress, RunContext, tool
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import final_reply, tool_results
from tests.fakes.openai import Reply, ToolCall, text

STARTED: dict[str, float] = {}  # name → time.monotonic() when its call began
FINISHED: list[str] = []
SECOND_DONE: list[asyncio.Event] = []


@tool("stamp", egress=Egress.READ_ONLY)
async def stamp(ctx: RunContext, name: str, seconds: float = 0.0) -> str:
    """Note when the call started, work `seconds`, then say so."""
    STARTED[name] = time.monotonic()
    await asyncio.sleep(seconds)
    FINISHED.append(name)
    return f"stamped {name}"


@tool("after_second", egress=Egress.READ_ONLY)
async def after_second(ctx: RunContext) -> str:
    """Finish only once `second` has finished (up to 5 s)."""
    await asyncio.wait_for(SECOND_DONE[0].wait(), 5)
    FINISHED.append("first")
    return "first done"


@tool("second", egress=Egress.READ_ONLY)
async def second(ctx: RunContext) -> str:
    """Finish at once, and let `after_second` finish."""
    FINISHED.append("second")
    SECOND_DONE[0].set()
    return "second done"


def fresh_stamps() -> None:
    STARTED.clear()
    FINISHED.clear()
    SECOND_DONE[:] = [asyncio.Event()]


pytestmark = pytest.mark.tools(stamp, after_second, second, reset=fresh_stamps)


async def test_a_call_starts_before_the_response_ends(bot: Bot) -> None:
    bot.llm.script(
        Reply(
            tool_calls=[
                ToolCall("stamp", {"name": "early"}),
                # The model goes on writing for a while after the first call is complete.
                ToolCall("stamp", {"name": "late"}, pause=0.5),
            ]
        ),
        text("Both stamped."),
    )
    bot.telegram.inject_message(OWNER, "stamp twice")
    await final_reply(bot, "Both stamped.")

    began, ended = bot.llm.streams[0]
    assert began < STARTED["early"] < ended  # started while the stream was still going
    assert STARTED["early"] < STARTED["late"]
    assert tool_results(bot.llm) == ["stamped early", "stamped late"]


async def test_results_keep_the_models_order_when_the_second_finishes_first(bot: Bot) -> None:
    bot.llm.script(
        Reply(tool_calls=[ToolCall("after_second", {}), ToolCall("second", {}, pause=0.2)]),
        text("Both done."),
    )
    bot.telegram.inject_message(OWNER, "do both")
    await final_reply(bot, "Both done.")

    assert FINISHED == ["second", "first"]
    answered = [m for m in bot.llm.requests[-1]["messages"] if m["role"] == "tool"]
    asked = bot.llm.requests[-1]["messages"][-3]["tool_calls"]
    assert [m["tool_call_id"] for m in answered] == [c["id"] for c in asked]
    assert [m["content"] for m in answered] == ["first done", "second done"]


async def test_a_stream_cut_after_a_call_started_leaves_no_call_running(bot: Bot) -> None:
    # Events: the role chunk, the call's head, its arguments in 8-character pieces; the
    # connection drops right after them, while the call (0.3 s of work) is running.
    arguments = {"name": "cut", "seconds": 0.3}
    events = 2 + math.ceil(len(json.dumps(arguments)) / 8)
    calls = [ToolCall("stamp", arguments), ToolCall("stamp", {"name": "never"})]
    bot.llm.script(Reply(tool_calls=calls, chunk_size=8, cut_after=events))
    bot.telegram.inject_message(OWNER, "stamp, then the line drops")
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and "cut off half-way" in str(c.params.get("text")),
        timeout=10,
    )
    assert bot.core is not None
    (record,) = await bot.core.audit.listing(tool="stamp")
    # Awaited before the owner was told: the call ended, and its record says so.
    assert FINISHED == ["cut"] and record["status"] == "completed"
    assert "never" not in STARTED


async def test_arguments_that_never_parse_are_run_after_the_stream_as_before(bot: Bot) -> None:
    bot.llm.script(
        Reply(
            tool_calls=[ToolCall("stamp", '{"name": "broken"'), ToolCall("stamp", {"name": "ok"})]
        ),
        text("One worked."),
    )
    bot.telegram.inject_message(OWNER, "stamp, badly")
    await final_reply(bot, "One worked.")

    broken, worked = tool_results(bot.llm)
    assert broken.startswith("Error: arguments for stamp are not valid JSON")
    assert worked == "stamped ok"
    assert list(STARTED) == ["ok"]
