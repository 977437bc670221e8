"""`task` subagents through the real bot (docs/reference/execution.md#subagents): the model over
HTTP through the openai SDK, approvals in Telegram, the audit trail in state.db."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import approval_message, buttons, delivered, final_reply, tool_results
from tests.fakes.openai import Reply, ToolCall, error, text, tool, tools

AGENTS = """\
[agents.north]
instructions = "North scout. Reads what it is asked to."
model = "scout-model"
tools = ["parallel_read", "serial_write"]

[agents.south]
instructions = "South scout. Reads what it is asked to."
tools = ["parallel_read", "serial_write"]

[agents.clerk]
instructions = "Clerk. Sends notes."
tools = ["send_note"]

[agents.digger]
instructions = "Digger. Searches deeply."
tools = ["deep_*"]
max_loops = 2
"""


pytestmark = pytest.mark.tools(*test_tools.TEST_TOOLS, reset=test_tools.reset)


async def with_agents(bot: Bot) -> None:
    await bot.stop()
    (bot.home / "augure.toml").write_text(AGENTS, encoding="utf-8")
    await bot.start()


async def records(bot: Bot) -> list[tuple[object, object, object]]:
    assert bot.core is not None
    listed = reversed(await bot.core.audit.listing())  # oldest first
    return [(r["tool"], r["origin"], r["status"]) for r in listed]


def speaker(body: dict[str, Any]) -> str:
    """Whose request this is: a scout's (by its instructions) or the main assistant's."""
    system = body["messages"][0]["content"]
    return next((n for n in ("north", "south") if system.startswith(n.title())), "main")


def two_scouts(tool_name: str, seen: dict[str, list[float]]) -> Any:
    """The main model sends two tasks in one response; each scout calls `tool_name` once,
    then answers; every request's arrival time is recorded per speaker."""

    def respond(body: dict[str, Any]) -> Reply:
        who = speaker(body)
        seen.setdefault(who, []).append(time.monotonic())
        answered = any(m["role"] == "tool" for m in body["messages"])
        if who == "main":
            if answered:
                return text("Both scouts reported.")
            return tools(
                ToolCall("task", {"prompt": "read the north", "agent": "north"}),
                ToolCall("task", {"prompt": "read the south", "agent": "south"}),
            )
        if answered:
            return text(f"{who}: done")
        return tool(tool_name, {"name": who})

    return respond


async def test_two_tasks_of_one_response_run_in_parallel(bot: Bot) -> None:
    await with_agents(bot)
    seen: dict[str, list[float]] = {}
    bot.llm.responder = two_scouts("parallel_read", seen)
    bot.telegram.inject_message(OWNER, "send both scouts")
    await final_reply(bot, "Both scouts reported.")
    # Each scout's span (its first request to its last) overlaps the other's.
    north, south = seen["north"], seen["south"]
    assert north[0] < south[-1] and south[0] < north[-1]
    # Each read waited for the other to start: neither ran alone.
    assert ("alone", "north") not in test_tools.EVENTS
    assert ("alone", "south") not in test_tools.EVENTS
    assert tool_results(bot.llm) == ["north: done", "south: done"]  # the model's order
    scouts = [r for r in bot.llm.requests if speaker(r) != "main"]
    assert {(speaker(r), r["model"]) for r in scouts} == {
        ("north", "scout-model"),
        ("south", "test-model"),
    }
    assert sorted(await records(bot)) == [
        ("parallel_read", "chat>task:north", "completed"),
        ("parallel_read", "chat>task:south", "completed"),
        ("task", "chat", "completed"),
        ("task", "chat", "completed"),
    ]
    # The scouts' four model calls count in the turn's usage with the main model's two.
    assert bot.core is not None
    usage = await bot.core.store.last_usage(str(OWNER))
    assert usage is not None and usage["llm_calls"] == 6


async def test_writes_inside_parallel_tasks_take_turns_without_deadlock(bot: Bot) -> None:
    await with_agents(bot)
    bot.llm.responder = two_scouts("serial_write", {})
    bot.telegram.inject_message(OWNER, "send both scouts")
    await final_reply(bot, "Both scouts reported.")
    kinds = [kind for kind, _ in test_tools.EVENTS]
    assert kinds == ["start", "end", "start", "end"]  # one write at a time, both done
    assert tool_results(bot.llm) == ["north: done", "south: done"]


async def test_a_write_inside_a_task_asks_the_owner_and_is_audited_as_the_agent(
    bot: Bot,
) -> None:
    await with_agents(bot)
    bot.llm.script(
        tool("task", {"prompt": "Tell alice the meeting moved.", "agent": "clerk"}),
        tool("send_note", {"to": "alice", "text": "The meeting moved."}),
        text("Sent the note to alice."),
        text("Alice is told."),
    )
    bot.telegram.inject_message(OWNER, "let alice know the meeting moved")
    message = await approval_message(bot)
    assert "(chat>task:clerk)" in message["text"] and "The meeting moved." in message["text"]
    assert test_tools.outbox(bot.home) == []  # the subagent waits on the owner
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Alice is told.")
    assert tool_results(bot.llm) == ["Sent the note to alice."]
    assert test_tools.outbox(bot.home) == [{"to": "alice", "text": "The meeting moved."}]
    assert bot.core is not None
    (note,) = await bot.core.audit.listing(tool="send_note")
    assert (note["origin"], note["approval_status"], note["status"]) == (
        "chat>task:clerk",
        "approved",
        "completed",
    )
    assert (await records(bot))[0] == ("task", "chat", "completed")


def lead(found: str) -> Reply:
    return Reply(text=found, tool_calls=[ToolCall("deep_search", {"query": "more"})])


async def test_a_subagent_out_of_steps_returns_its_last_answer_marked(bot: Bot) -> None:
    await with_agents(bot)
    bot.llm.script(
        tool("task", {"prompt": "Dig.", "agent": "digger"}),
        lead("First lead."),
        tool("deep_search", {"query": "deeper"}),
        text("The digger ran out of steps."),
    )
    bot.telegram.inject_message(OWNER, "dig")
    await final_reply(bot, "The digger ran out of steps.")
    assert tool_results(bot.llm) == ["First lead.\n\n[budget exhausted after 2 steps]"]
    # A deferred tool its globs match is offered to it directly, without load_tools.
    digger = bot.llm.requests[1]
    assert [t["function"]["name"] for t in digger["tools"]] == ["deep_search"]
    assert digger["messages"][-1] == {"role": "user", "content": "Dig."}


async def test_a_model_error_mid_way_returns_the_output_so_far_interrupted(bot: Bot) -> None:
    await with_agents(bot)
    bot.llm.script(
        tool("task", {"prompt": "Dig.", "agent": "digger"}),
        lead("A partial finding."),
        *[error(503)] * 3,  # the first try and the SDK's two retries
        text("The digger was cut off."),
    )
    bot.telegram.inject_message(OWNER, "dig")
    await final_reply(bot, "The digger was cut off.")
    assert tool_results(bot.llm) == [
        "A partial finding.\n\n[interrupted: the model endpoint answered 503]"
    ]


async def test_a_task_released_to_the_background_reports_in_a_turn_of_its_own(bot: Bot) -> None:
    """`task` takes the `background` flag (docs/reference/execution.md#subagents): the turn ends at
    once, the subagent works on, and its answer comes back to the chat as a turn with origin
    `chat>background`."""
    await with_agents(bot)

    def respond(body: dict[str, Any]) -> Reply:
        if speaker(body) == "north":
            return text("north: the path is clear")
        last = body["messages"][-1]
        if last["role"] == "tool":
            return text("The scout is on its way.")
        if str(last["content"]).startswith("[Background task"):
            return text("The scout reported: the path is clear.")
        return tool("task", {"prompt": "scout the north", "agent": "north", "background": True})

    bot.llm.responder = respond
    bot.telegram.inject_message(OWNER, "send a scout north, I'll wait")
    await final_reply(bot, "The scout is on its way.")
    await delivered(bot.telegram, "The scout reported: the path is clear.")
    (started,) = tool_results(bot.llm, 1)
    assert started.startswith("Started in the background as task ")
    assert ("task", "chat>background", "completed") in await records(bot)
