"""The sources an answer drew on, named for the owner (augure.agent.sources)."""

from __future__ import annotations

import json
from typing import Any

from augure.agent.sources import sources_of
from augure.common.caller import Reading
from augure.common.ports import Sources


def called(name: str, **arguments: Any) -> dict[str, Any]:
    call = {"id": "c1", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_work_that_read_nothing_from_outside_has_no_sources() -> None:
    reading = Reading(owner=["hello"])
    reading.read("the memory file", None)
    assert sources_of(reading, []) == Sources()
    assert sources_of(None, []) == Sources()


def test_a_page_is_named_by_the_host_of_the_address_it_was_read_from() -> None:
    reading = Reading()
    reading.read("page one", "http")
    reading.read("page two", "http")
    messages = [
        called("http", method="GET", url="https://news.example/a"),
        called("http", method="GET", url="https://news.example/b"),
        called("http", method="GET", url="https://Shop.example:8443/x"),
    ]
    assert sources_of(reading, messages).names == ("news.example", "shop.example")


def test_a_source_with_no_address_is_named_by_its_kind_or_its_name() -> None:
    reading = Reading()
    reading.read("a mail", "email")
    reading.read("results", "web_search")
    reading.read("a note", "mcp__notes__read")
    names = sources_of(reading, [called("email", action="read", uid=3)]).names
    assert names == ("mail", "a web search", "mcp__notes__read")


def test_a_batch_is_named_by_the_addresses_of_its_sub_calls() -> None:
    reading = Reading()
    reading.read("both pages", "batch: http")
    calls = [{"tool": "http", "arguments": {"method": "GET", "url": "https://a.example/"}}]
    assert sources_of(reading, [called("batch", calls=calls)]).names == ("a.example",)
    unnamed = Reading()
    unnamed.read("a mail and a search", "batch: email, web_search")
    assert sources_of(unnamed, []).names == ("mail", "a web search")


def test_a_forwarded_message_is_named_by_its_sender() -> None:
    reading = Reading()
    reading.read("dinner at 8?", "forwarded from Alice")
    assert sources_of(reading, []).line == "from: forwarded from Alice"
