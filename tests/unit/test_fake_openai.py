"""The scripted fake OpenAI server, driven by the real ``openai`` SDK."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import openai
import pytest
from openai import AsyncOpenAI
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

from tests.fakes.openai import (
    NO_REPLY_MESSAGE,
    STOPPED_MESSAGE,
    FakeOpenAI,
    Reply,
    ToolCall,
    error,
    text,
    tool,
    tools,
)

MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city", "days"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def client(fake: FakeOpenAI) -> AsyncIterator[AsyncOpenAI]:
    sdk = AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
    yield sdk
    await sdk.close()


async def _collect(
    client: AsyncOpenAI, **kw: Any
) -> tuple[list[ChatCompletionChunk], ChatCompletionStreamState[Any]]:
    stream = await client.chat.completions.create(
        model="test-model", messages=MESSAGES, stream=True, **kw
    )
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    chunks = []
    async for chunk in stream:
        chunks.append(chunk)
        state.handle_chunk(chunk)
    return chunks, state


async def test_plain_text(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(text("Hello there"))
    resp = await client.chat.completions.create(model="gpt-x", messages=MESSAGES)
    assert resp.id.startswith("chatcmpl-")
    assert resp.object == "chat.completion"
    assert resp.model == "gpt-x"
    assert abs(resp.created - time.time()) < 60
    msg = resp.choices[0].message
    assert (msg.role, msg.content, msg.tool_calls) == ("assistant", "Hello there", None)
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage is not None
    assert resp.usage.prompt_tokens == len(json.dumps(MESSAGES)) // 4
    assert resp.usage.completion_tokens == len("Hello there") // 4
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens


async def test_tool_call_plain(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(tool("weather", {"city": "Paris", "days": 2}), tool("weather", '{"city":"Oslo"}'))
    first = await client.chat.completions.create(model="m", messages=MESSAGES, tools=[WEATHER_TOOL])
    second = await client.chat.completions.create(model="m", messages=MESSAGES)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    [call] = choice.message.tool_calls or []
    assert call.type == "function" and call.id == "call_1"
    assert call.function.name == "weather"
    assert json.loads(call.function.arguments) == {"city": "Paris", "days": 2}
    [call2] = second.choices[0].message.tool_calls or []
    assert call2.type == "function"
    assert call2.id == "call_2" and call2.function.arguments == '{"city":"Oslo"}'


async def test_several_tool_calls_with_text(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(
        tools(ToolCall("a", {"x": 1}, id="call_custom"), ToolCall("b", "{}"), text="Let me check")
    )
    resp = await client.chat.completions.create(model="m", messages=MESSAGES)
    msg = resp.choices[0].message
    assert msg.content == "Let me check"
    calls = [c for c in msg.tool_calls or [] if c.type == "function"]
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        ("call_custom", "a", '{"x": 1}'),
        ("call_1", "b", "{}"),
    ]


async def test_explicit_usage_and_finish_reason(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(text("cut", usage=(100, 7), finish_reason="length"))
    resp = await client.chat.completions.create(model="m", messages=MESSAGES)
    assert resp.usage is not None
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (100, 7)
    assert resp.usage.total_tokens == 107
    assert resp.choices[0].finish_reason == "length"


async def test_stream_text_with_usage(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    reply_text = "The quick brown fox jumps over the lazy dog"
    fake.script(text(reply_text, chunk_size=5, usage=(11, 22)))
    chunks, state = await _collect(client, stream_options={"include_usage": True})
    assert all(c.object == "chat.completion.chunk" and c.model == "test-model" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    deltas = [c.choices[0].delta.content for c in chunks if c.choices]
    assert [d for d in deltas if d] == [reply_text[i : i + 5] for i in range(0, len(reply_text), 5)]
    content_chunks = [c for c in chunks if c.choices]
    assert [c.choices[0].finish_reason for c in content_chunks][-2:] == [None, "stop"]
    usage_chunk = chunks[-1]
    assert usage_chunk.choices == [] and usage_chunk.usage is not None
    assert (usage_chunk.usage.prompt_tokens, usage_chunk.usage.total_tokens) == (11, 33)
    final = state.get_final_completion()
    assert final.choices[0].message.content == reply_text
    assert final.usage is not None and final.usage.completion_tokens == 22


async def test_stream_without_usage_option(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(text("short"))
    chunks, _ = await _collect(client)
    assert all(c.choices for c in chunks)
    assert all(c.usage is None for c in chunks)


async def test_stream_tool_calls_accumulate(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    args = {"city": "Saint-Étienne-du-Rouvray", "days": 10}
    fake.script(
        tools(
            ToolCall("weather", args), ToolCall("weather", {"city": "Nice", "days": 1}), text="ok"
        )
    )
    chunks, state = await _collect(client, stream_options={"include_usage": True})
    first_deltas = [
        tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or [] if tc.id
    ]
    assert [(tc.index, tc.type) for tc in first_deltas] == [(0, "function"), (1, "function")]
    assert all(tc.function and tc.function.name == "weather" for tc in first_deltas)
    final = state.get_final_completion()
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "ok"
    calls = choice.message.tool_calls or []
    assert [c.id for c in calls] == ["call_1", "call_2"]
    assert json.loads(calls[0].function.arguments) == args
    assert json.loads(calls[1].function.arguments) == {"city": "Nice", "days": 1}
    assert final.usage is not None and final.usage.total_tokens > 0


async def test_stream_helper_parses_tool_arguments(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(tool("weather", {"city": "Lyon", "days": 3}, chunk_size=3))
    async with client.chat.completions.stream(
        model="m",
        messages=MESSAGES,
        tools=[WEATHER_TOOL],
        stream_options={"include_usage": True},
    ) as stream:
        done = [e async for e in stream if e.type == "tool_calls.function.arguments.done"]
        final = await stream.get_final_completion()
    assert [(e.name, e.parsed_arguments) for e in done] == [
        ("weather", {"city": "Lyon", "days": 3})
    ]
    [call] = final.choices[0].message.tool_calls or []
    assert call.function.parsed_arguments == {"city": "Lyon", "days": 3}
    assert final.usage is not None


@pytest.mark.parametrize(
    ("status", "exc_type", "err_type"),
    [
        (500, openai.InternalServerError, "server_error"),
        (429, openai.RateLimitError, "requests"),
        (400, openai.BadRequestError, "invalid_request_error"),
    ],
)
async def test_error_status(
    fake: FakeOpenAI,
    client: AsyncOpenAI,
    status: int,
    exc_type: type[openai.APIStatusError],
    err_type: str,
) -> None:
    fake.script(error(status, "boom"), error(status, "boom"), text("after"))
    with pytest.raises(exc_type) as info:
        await client.chat.completions.create(model="m", messages=MESSAGES)
    assert info.value.status_code == status
    assert info.value.type == err_type
    assert "boom" in info.value.message
    assert isinstance(info.value.body, dict) and info.value.body["message"] == "boom"
    # streaming requests get the same error before any chunk
    with pytest.raises(exc_type):
        await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    resp = await client.chat.completions.create(model="m", messages=MESSAGES)
    assert resp.choices[0].message.content == "after"


async def test_sdk_retries_on_500(fake: FakeOpenAI) -> None:
    fake.script(error(500), text("recovered"))
    sdk = AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=1)
    try:
        resp = await sdk.chat.completions.create(model="m", messages=MESSAGES)
    finally:
        await sdk.close()
    assert resp.choices[0].message.content == "recovered"
    assert len(fake.requests) == 2


async def test_unscripted_request_fails_visibly(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    with pytest.raises(openai.InternalServerError, match=NO_REPLY_MESSAGE):
        await client.chat.completions.create(model="m", messages=MESSAGES)


async def test_responder_used_when_queue_empty(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.responder = lambda req: text(f"echo {req['messages'][-1]['content']}")
    fake.script(text("scripted first"))
    got = [
        (await client.chat.completions.create(model="m", messages=MESSAGES)).choices[0]
        for _ in range(3)
    ]
    assert [c.message.content for c in got] == ["scripted first", "echo hi", "echo hi"]


async def test_requests_recorded(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(text("a"), text("b"), text("c"))
    assert fake.pending() == 3
    await client.chat.completions.create(model="m1", messages=MESSAGES, temperature=0.5)
    task = asyncio.create_task(
        client.chat.completions.create(
            model="m2", messages=[{"role": "user", "content": "second"}], tools=[WEATHER_TOOL]
        )
    )
    await fake.wait_requests(2)
    await task
    assert fake.pending() == 1
    assert [r["model"] for r in fake.requests] == ["m1", "m2"]
    assert fake.requests[0]["temperature"] == 0.5
    assert fake.requests[1]["messages"] == [{"role": "user", "content": "second"}]
    assert fake.requests[1]["tools"][0]["function"]["name"] == "weather"
    with pytest.raises(TimeoutError, match="expected 5 requests"):
        await fake.wait_requests(5, timeout=0.05)


async def test_delay_triggers_sdk_timeout(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(text("too late", delay=3.0))
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        await client.chat.completions.create(model="m", messages=MESSAGES, timeout=0.2)
    assert time.monotonic() - started < 2.0


async def test_chunk_delay(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.script(text("abcdef", chunk_size=2, chunk_delay=0.05))
    started = time.monotonic()
    chunks, state = await _collect(client)
    assert time.monotonic() - started >= 0.2
    assert state.get_final_completion().choices[0].message.content == "abcdef"
    assert len(chunks) == 5  # role, 3 content pieces, finish


async def test_stop_is_fast_with_pending_delay() -> None:
    fake = FakeOpenAI()
    await fake.start()
    fake.script(Reply(text="never", delay=30.0))
    sdk = AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
    task = asyncio.create_task(sdk.chat.completions.create(model="m", messages=MESSAGES))
    await fake.wait_requests(1)
    started = time.monotonic()
    await fake.stop()
    assert time.monotonic() - started < 2.0
    with pytest.raises(openai.InternalServerError, match=STOPPED_MESSAGE):
        await task
    await sdk.close()


async def test_stop_cuts_slow_stream() -> None:
    fake = FakeOpenAI()
    await fake.start()
    fake.script(text("x" * 50, chunk_size=1, chunk_delay=10.0))
    sdk = AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
    got: list[str] = []

    async def consume() -> None:
        stream = await sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        async for chunk in stream:
            got.append(chunk.choices[0].delta.content or "")

    task = asyncio.create_task(consume())
    await fake.wait_requests(1)
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await fake.stop()
    assert time.monotonic() - started < 2.0
    with pytest.raises(openai.APIError):
        await task
    assert "".join(got) != "x" * 50
    await sdk.close()


async def test_models(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.models = ["alpha", "beta"]
    assert [m.id async for m in client.models.list()] == ["alpha", "beta"]


async def test_transcription(fake: FakeOpenAI, client: AsyncOpenAI) -> None:
    fake.transcription_text = "bonjour tout le monde"
    audio = b"OggS\x00fake-audio-bytes"
    result = await client.audio.transcriptions.create(
        model="whisper-1", file=("voice.ogg", audio, "audio/ogg")
    )
    assert result.text == "bonjour tout le monde"
    assert fake.transcriptions == [{"model": "whisper-1", "filename": "voice.ogg", "bytes": audio}]
    assert fake.requests == []


async def test_missing_bearer_is_401(fake: FakeOpenAI) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{fake.base_url}/chat/completions", json={}) as resp:
            assert resp.status == 401
            body = await resp.json()
        async with http.get(f"{fake.base_url}/models", headers={"Authorization": "Basic x"}) as r:
            assert r.status == 401
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert fake.requests == []
