"""`batch` through the real bot: each sub-call gated and audited, results numbered in order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from augure.store.audit import Audit
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import (
    REJECTED,
    approval_message,
    augure,
    buttons,
    environment,
    final_reply,
    tool_results,
)
from tests.e2e.test_code_mode import enable_code_mode
from tests.fakes.openai import text, tool

pytestmark = pytest.mark.tools(*test_tools.TEST_TOOLS, reset=test_tools.reset)


def audit(bot: Bot) -> Audit:
    assert bot.core is not None
    return bot.core.audit


def sub(tool_name: str, /, **arguments: Any) -> dict[str, Any]:
    return {"tool": tool_name, "arguments": arguments}


async def test_a_rejected_sub_call_fails_none_of_the_others(bot: Bot) -> None:
    calls = [
        sub("parallel_read", name="a"),
        sub("send_note", to="bob", text="hi"),
        sub("parallel_read", name="b"),
    ]
    bot.llm.script(tool("batch", {"calls": calls}), text("Read both; the note was refused."))
    bot.telegram.inject_message(OWNER, "read a and b, and tell bob hi")
    message = await approval_message(bot)
    assert "send_note" in message["text"]
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Reject"])
    await final_reply(bot, "Read both; the note was refused.")

    (result,) = tool_results(bot.llm)
    assert result.split("\n") == [
        "[1] parallel_read: read a",
        f"[2] send_note: {REJECTED}",
        "[3] parallel_read: read b",
    ]
    assert test_tools.outbox(bot.home) == []
    # Each read waits for the other to start: both ending without "alone" shows they overlapped.
    assert [kind for kind, _ in test_tools.EVENTS] == ["start", "start", "end", "end"]

    (parent,) = await audit(bot).listing(tool="batch")
    children = [row for row in await audit(bot).listing() if row["tool"] != "batch"]
    names = sorted(row["tool"] for row in children)
    assert names == ["parallel_read", "parallel_read", "send_note"]
    assert {row["parent"] for row in children} == {parent["id"]}
    assert parent["parent"] is None and parent["status"] == "completed"
    (note,) = [row for row in children if row["tool"] == "send_note"]
    assert note["approval_status"] == "rejected"


async def test_tools_that_call_tools_are_refused_as_sub_calls(bot: Bot) -> None:
    calls = [
        sub("batch", calls=[sub("datetime")]),
        sub("load_tools", names=["deep_search"]),
        sub("datetime", timezone="UTC"),
        sub("execute_code", code="print(1)"),
        sub("task", prompt="do it"),
    ]
    bot.llm.script(tool("batch", {"calls": calls}), text("Done."))
    bot.telegram.inject_message(OWNER, "nest some calls")
    await final_reply(bot, "Done.")

    lines = tool_results(bot.llm)[0].split("\n")
    assert len(lines) == 5
    for number, name in ((1, "batch"), (2, "load_tools"), (4, "execute_code"), (5, "task")):
        assert lines[number - 1] == (
            f"[{number}] {name}: Error: {name} cannot run inside batch; call it directly"
        )
    assert lines[2].startswith("[3] datetime: ") and "Error" not in lines[2]
    # Only the batch and its one real sub-call reached the pipeline.
    assert sorted(row["tool"] for row in await audit(bot).listing()) == ["batch", "datetime"]


async def test_more_than_25_calls_or_other_keys_are_invalid(bot: Bot) -> None:
    too_many = [sub("datetime")] * 26
    other_key = [{"tool": "datetime", "arguments": {}, "why": "now"}]
    bot.llm.script(
        tool("batch", {"calls": too_many}),
        tool("batch", {"calls": other_key}),
        tool("batch", {"calls": []}),
        text("I could not."),
    )
    bot.telegram.inject_message(OWNER, "the time, 26 times")
    await final_reply(bot, "I could not.")

    results = tool_results(bot.llm)
    assert len(results) == 3
    assert results[0].startswith("Error: invalid arguments for batch: calls: ")
    assert "at most 25" in results[0]
    assert "calls.0.why: unexpected parameter" in results[1]
    assert "at least 1" in results[2]
    assert await audit(bot).listing() == []  # nothing ran, nothing was recorded


async def test_an_untrusted_sub_result_keeps_the_whole_result_marked(bot: Bot) -> None:
    calls = [sub("datetime", timezone="UTC"), sub("fetch_page", url="https://shop.example")]
    bot.llm.script(tool("batch", {"calls": calls}), text("Prices look good."))
    bot.telegram.inject_message(OWNER, "the time and the shop")
    await final_reply(bot, "Prices look good.")

    (result,) = tool_results(bot.llm)
    assert result.startswith('<untrusted_content source="batch: fetch_page">\n[1] datetime: ')
    assert result.endswith("\n</untrusted_content>")
    # The page's own closing tag, and the sub-result's marker, cannot close the outer one.
    assert result.count("</untrusted_content>") == 1
    assert '[2] fetch_page: <untrusted-content source="fetch_page">\nPage https://shop.example' in (
        result
    )


async def test_a_batch_of_writes_takes_the_write_lock_one_call_at_a_time(bot: Bot) -> None:
    calls = [sub("serial_write", name="a"), sub("serial_write", name="b")]
    bot.llm.script(tool("batch", {"calls": calls}), text("Wrote both."))
    bot.telegram.inject_message(OWNER, "write a and b")
    # A batch holding the executor's write lock would wait forever for its own sub-calls.
    await final_reply(bot, "Wrote both.")

    assert tool_results(bot.llm) == ["[1] serial_write: wrote a\n[2] serial_write: wrote b"]
    assert test_tools.EVENTS == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]


async def test_the_audit_listing_names_each_sub_calls_parent(bot: Bot) -> None:
    calls = [sub("datetime", timezone="UTC"), sub("datetime")]
    bot.llm.script(tool("batch", {"calls": calls}), text("Twice."))
    bot.telegram.inject_message(OWNER, "the time twice")
    await final_reply(bot, "Twice.")
    await bot.stop()  # the CLI reads the same state.db

    env = environment(bot.home)
    code, out, _ = await augure("invocations", "--json", env=env)
    assert code == 0
    rows = json.loads(out)
    (parent,) = [row for row in rows if row["tool"] == "batch"]
    assert [row["parent"] for row in rows if row["tool"] == "datetime"] == [parent["id"]] * 2
    assert parent["parent"] is None

    code, out, _ = await augure("invocations", env=env)
    lines = out.splitlines()
    assert sum(line.endswith(f"in:{parent['id']}") for line in lines) == 2


async def test_a_snippets_api_calls_name_the_snippet_as_parent(bot: Bot) -> None:
    await enable_code_mode(bot)
    snippet = "api.datetime(timezone='UTC')\napi.datetime()"
    bot.llm.script(tool("execute_code", {"code": snippet}), text("Twice."))
    bot.telegram.inject_message(OWNER, "the time twice, in code")
    await final_reply(bot, "Twice.")

    (parent,) = await audit(bot).listing(tool="execute_code")
    inner = await audit(bot).listing(tool="datetime")
    assert [row["parent"] for row in inner] == [parent["id"]] * 2
