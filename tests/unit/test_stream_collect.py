"""How a streamed answer's tool calls are told as soon as each is complete (`LLM._collect`),
fed the chunks exactly as the SDK hands them over (parsed JSON events)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from augure.llm.client import LLM, ToolCallRequest


def piece(index: int, arguments: str, name: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if name is not None:  # the first chunk of a call only, as the real API sends it
        call |= {"id": f"call_{index}", "type": "function"}
        call["function"]["name"] = name
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


async def events(*chunks: dict[str, Any]) -> AsyncIterator[object]:
    for chunk in chunks:
        yield chunk


async def no_text(delta: str) -> None:
    raise AssertionError("no text in this answer")


async def test_each_call_is_told_once_when_its_arguments_close_even_interleaved() -> None:
    told: list[tuple[ToolCallRequest, str]] = []
    stream = events(
        piece(0, "", name="search"),
        piece(1, '{"path": ', name="read"),
        piece(0, '{"q": "a}'),  # a brace inside a string: not the end
        piece(0, '"}'),
        piece(1, '"x.md"'),
        piece(1, "}"),
    )
    response = await LLM._collect(stream, no_text, lambda c: told.append((c, c.arguments)))

    assert [(call.name, arguments) for call, arguments in told] == [
        ("search", '{"q": "a}"}'),
        ("read", '{"path": "x.md"}'),
    ]
    # The very objects of the response: the turn finds the started calls by identity.
    assert [id(call) for call, _ in told] == [id(call) for call in response.tool_calls]


async def test_arguments_that_never_close_are_not_told() -> None:
    told: list[ToolCallRequest] = []
    stream = events(piece(0, '{"q": ', name="search"), piece(0, '"a"'))
    response = await LLM._collect(stream, no_text, told.append)
    assert told == [] and response.tool_calls[0].arguments == '{"q": "a"'
