"""The turn loop with an in-process scripted model: rounds, limits, errors, order, compaction."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from augure.agent.history import SUMMARY_PROMPT
from augure.config.settings import load_config
from augure.core.app import Core
from augure.llm.faults import LLMError
from tests.cores import Cores
from tests.fakes.model import Request, ScriptedModel, answer, call

MakeCore = Callable[..., Awaitable[tuple[Core, ScriptedModel]]]


@pytest.fixture
async def make_core(tmp_path: Path) -> AsyncIterator[MakeCore]:
    opened = Cores()

    async def make(toml: str = "", *script: object) -> tuple[Core, ScriptedModel]:
        home = tmp_path / f"home{len(opened)}"
        home.mkdir()
        (home / "augure.toml").write_text(toml)
        model = ScriptedModel(*script)  # type: ignore[arg-type]
        core = await opened.open(load_config(home=home), model=model)
        return core, model

    yield make
    await opened.close()


async def test_a_tool_round_then_the_answer(make_core: MakeCore) -> None:
    core, model = await make_core(
        "", call("datetime", timezone="Europe/Paris"), answer("It is late in Paris.")
    )
    reply = await core.agent.handle("1", "what time is it in Paris?")
    assert reply.text == "It is late in Paris."
    first, second = model.requests
    # Deferred: named in the system prompt without its schema, and callable all the same.
    assert "datetime" not in first.tool_names and "- datetime:" in first.messages[0]["content"]
    assert second.messages[-2]["tool_calls"][0]["function"]["name"] == "datetime"
    assert second.last["role"] == "tool" and "Europe/Paris" in second.last["content"]
    assert (await core.store.usage_totals("1"))["prompt_tokens"] == 20
    assert await core.store.open_turns() == []


async def test_out_of_rounds_one_last_call_without_tools(make_core: MakeCore) -> None:
    core, model = await make_core("[agent]\nmax_loops = 2\n")
    model.then(call("datetime"), call("datetime"), answer("Here is what I found."))
    reply = await core.agent.handle("1", "keep looking")
    assert reply.text.startswith("Here is what I found.") and "agent.max_loops" in reply.text
    assert [r.tool_choice for r in model.requests] == [None, None, "none"]


async def test_the_token_budget_stops_the_turn(make_core: MakeCore) -> None:
    core, model = await make_core("[agent]\ntoken_budget = 20\n")
    model.then(call("datetime"), call("datetime"))
    reply = await core.agent.handle("1", "loop")
    assert "over the budget of 20" in reply.text and len(model.requests) == 2


async def test_a_model_error_is_an_apology_and_the_message_is_kept(make_core: MakeCore) -> None:
    core, _ = await make_core("", LLMError("the model endpoint answered 503", 503))
    reply = await core.agent.handle("1", "are you there?")
    assert reply.text.startswith("Sorry, I could not get an answer")
    conversation = await core.store.open_conversation("1")
    assert [m["content"] for m in await core.store.messages(conversation)] == ["are you there?"]


async def test_a_mistaken_call_is_seen_once_then_pruned(make_core: MakeCore) -> None:
    core, model = await make_core("", call("no_such_tool"), answer("Sorry, my mistake."))
    await core.agent.handle("1", "do it")
    assert "unknown tool" in model.requests[1].last["content"]
    conversation = await core.store.open_conversation("1")
    stored = await core.store.messages(conversation)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[-1]["content"] == "Sorry, my mistake."


async def test_one_chat_waits_its_turn_while_other_chats_go_on(make_core: MakeCore) -> None:
    core, model = await make_core()
    release = asyncio.Event()
    asked: list[str] = []

    async def respond(request: Request) -> object:
        text = request.last["content"]
        asked.append(text)
        if text == "a1":
            await release.wait()
        return answer(f"re {text}")

    model.responder = respond  # type: ignore[assignment]
    first = asyncio.create_task(core.agent.handle("A", "a1"))
    await asyncio.sleep(0.05)
    second = asyncio.create_task(core.agent.handle("A", "a2"))
    other = await asyncio.wait_for(core.agent.handle("B", "b1"), 5)
    assert other.text == "re b1" and asked == ["a1", "b1"]  # a2 waits behind a1
    release.set()
    assert (await first).text == "re a1" and (await second).text == "re a2"
    assert asked == ["a1", "b1", "a2"]


async def test_compaction_summarises_old_turns_and_keeps_the_newest_message_whole(
    make_core: MakeCore,
) -> None:
    core, model = await make_core("[agent]\nhistory_tokens = 1000\n")

    def respond(request: Request) -> object:
        if request.messages[0]["content"] == SUMMARY_PROMPT:
            return answer("SUMMARY of the early talk")
        return answer("ok " + "x" * 800)

    model.responder = respond  # type: ignore[assignment]
    for n in range(8):
        await core.agent.handle("1", f"question {n} " + "y" * 800)
    summaries = [r for r in model.requests if r.messages[0]["content"] == SUMMARY_PROMPT]
    assert summaries
    last = model.requests[-1].messages
    assert last[1]["role"] == "system" and "SUMMARY of the early talk" in last[1]["content"]
    assert last[-1] == {"role": "user", "content": "question 7 " + "y" * 800}
    conversation = await core.store.open_conversation("1")
    stored = await core.store.messages(conversation)
    assert stored[-2]["content"] == "question 7 " + "y" * 800
    assert "SUMMARY" in stored[0]["content"]
