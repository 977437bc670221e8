"""Chat Completions through the openai SDK, which owns retries and backoff."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from augure.common.import_guard import importing_without
from augure.common.keepalive import keep_client_sockets
from augure.config.llm import LLMConfig
from augure.llm.faults import Fault, LLMError, status_fault
from augure.llm.reading import cached_tokens as _cached
from augure.llm.reading import field as _field
from augure.llm.reading import text as _text

if TYPE_CHECKING:
    from openai import APIStatusError, AsyncOpenAI

log = logging.getLogger(__name__)

TextSink = Callable[[str], Awaitable[None]]
# Told of each tool call as soon as its arguments are complete in a streamed answer (the same
# object later returned in `LLMResponse.tool_calls`), so it can start before the answer ends.
ToolCallSink = Callable[["ToolCallRequest"], None]


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: str


@dataclass
class LLMResponse:
    content: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Of the prompt tokens, those the endpoint served from its cache (where it says so).
    cached_tokens: int = 0
    model: str = ""  # which model answered (a fallback's, a role's), once known
    # False when the endpoint sent no `usage`: the spend counts estimated tokens instead.
    usage_reported: bool = True

    def as_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


class LLM:
    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.model = config.model
        self._client: AsyncOpenAI | None = None
        self._warming: asyncio.Future[AsyncOpenAI] | None = None

    @property
    def client(self) -> AsyncOpenAI:
        # Imported on first use: the SDK is slow to import (docs/performance.md) and would sit
        # between `augure run` and the first poll.
        if self._client is None:
            # aiohttp, when installed, is only for a client Augure does not use: memory for nothing.
            with importing_without("aiohttp"):
                from openai import AsyncOpenAI, DefaultAsyncHttpxClient

            http_client = DefaultAsyncHttpxClient(
                event_hooks={"response": [_not_json_is_a_bad_gateway, _quota_is_final]}
            )
            # The SDK builds the transports with its own limits and, as httpx does, the
            # proxies of HTTPS_PROXY / ALL_PROXY / NO_PROXY; only their pools' idle checks
            # change (augure.common.keepalive).
            keep_client_sockets(http_client)
            self._client = AsyncOpenAI(
                api_key=self.config.api_key.get_secret_value() if self.config.api_key else "-",
                base_url=self.config.base_url,
                timeout=self.config.request_timeout_seconds,
                max_retries=self.config.max_retries,
                http_client=http_client,
            )
        return self._client

    async def warm_up(self) -> None:
        """Import the SDK and build the client on a worker thread (the import is CPU-heavy)."""
        if self._client is None:
            if self._warming is None or self._warming.done():  # done, yet no client: failed
                self._warming = asyncio.ensure_future(asyncio.to_thread(lambda: self.client))
            await asyncio.shield(self._warming)

    async def _ready(self) -> AsyncOpenAI:
        # A call during the warm-up waits for it here, with the event loop free: importing
        # the SDK on the loop would block on the worker's import lock and stall every chat.
        await self.warm_up()
        return self.client

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_choice: str | None = None,
        on_text: TextSink | None = None,
        model: str | None = None,
        on_tool_call: ToolCallSink | None = None,
    ) -> LLMResponse:
        """One completion. With `on_text`, the answer is streamed and each text piece is
        passed to it as it arrives, and each tool call to `on_tool_call` once its arguments
        are complete; the returned response is the same either way. `model` replaces
        `[llm] model` for this call (a subagent's own model)."""
        client = await self._ready()
        import openai

        request: dict[str, Any] = {"model": model or self.model, "messages": messages}
        if tools:
            request["tools"] = tools
            if tool_choice:
                request["tool_choice"] = tool_choice
        if self.config.max_tokens:
            request["max_tokens"] = self.config.max_tokens
        try:
            if on_text is not None:
                return await self._stream(client, request, on_text, on_tool_call)
            # The SDK's lower-level `post` keeps its retries, timeouts and errors but skips
            # `create`'s TypedDict walk over every message (a cost per history message per
            # call, growing with the conversation); `cast_to=object` hands back the parsed
            # JSON instead of building typed models of it, which we would only read once.
            completion = await client.post("/chat/completions", cast_to=object, body=request)
        except openai.APITimeoutError:
            raise LLMError("the model did not answer in time", fault=Fault.TIMEOUT) from None
        except openai.APIConnectionError:
            raise LLMError(
                "the model endpoint cannot be reached", fault=Fault.UNREACHABLE
            ) from None
        except openai.APIStatusError as exc:
            raise self._status_error(exc, request["model"]) from None
        return _parsed(completion)

    def _status_error(self, exc: APIStatusError, model: str) -> LLMError:
        if exc.status_code >= 500 and isinstance(exc.body, str) and exc.body:
            # A web page (a proxy's error page, a captive portal): the SDK retried it like
            # any 5xx; the page itself means nothing to the owner.
            tries = self.config.max_retries + 1
            return LLMError(
                "the model endpoint returned an invalid response (not JSON) — "
                f"tried {tries} time{'s' if tries > 1 else ''}",
                exc.status_code,
                fault=Fault.UNAVAILABLE,
            )
        status = exc.status_code
        fault = status_fault(status, exc.code, exc.message)
        return LLMError(f"the model endpoint answered {status}", status, fault=fault, model=model)

    async def _stream(
        self,
        client: AsyncOpenAI,
        request: dict[str, Any],
        on_text: TextSink,
        on_tool_call: ToolCallSink | None,
    ) -> LLMResponse:
        from openai import APIConnectionError, AsyncStream

        body = {**request, "stream": True, "stream_options": {"include_usage": True}}
        # `AsyncStream[object]`: each event comes as its parsed JSON. Building a typed
        # chunk model per event was a third of the bot's CPU per turn.
        stream = await client.post(
            "/chat/completions",
            cast_to=object,
            body=body,
            stream=True,
            stream_cls=AsyncStream[object],
        )
        broken: tuple[type[Exception], ...] = (APIConnectionError, *_transport_errors())
        try:
            return await self._collect(stream, on_text, on_tool_call)
        except broken:
            # The SDK cannot retry once the answer has started: say what happened, rather
            # than "cannot be reached" under a half-written reply. Retryable: when nothing of
            # it reached the owner yet, another model may answer (augure.llm.models).
            raise LLMError(
                "the model's answer was cut off half-way", fault=Fault.UNREACHABLE
            ) from None

    @staticmethod
    async def _collect(
        stream: AsyncIterator[object], on_text: TextSink, on_tool_call: ToolCallSink | None = None
    ) -> LLMResponse:
        text: list[str] = []
        calls: dict[int, ToolCallRequest] = {}
        told: set[int] = set()
        result = LLMResponse(content=None, usage_reported=False)
        async for chunk in stream:
            usage = _field(chunk, "usage", dict)
            if usage:
                result.usage_reported = True
                result.prompt_tokens = _field(usage, "prompt_tokens", int)
                result.completion_tokens = _field(usage, "completion_tokens", int)
                result.cached_tokens = _cached(usage)
            for choice in _field(chunk, "choices", list):
                delta = _field(choice, "delta", dict)
                content = _field(delta, "content", str)
                if content:
                    text.append(content)
                    await on_text(content)
                for piece in _field(delta, "tool_calls", list):
                    index = _field(piece, "index", int)
                    call = calls.setdefault(index, ToolCallRequest("", "", ""))
                    call.id = _text(piece, "id") or call.id
                    function = _field(piece, "function", dict)
                    call.name += _text(function, "name")
                    call.arguments += _text(function, "arguments")
                    if on_tool_call is not None and index not in told and _complete(call):
                        told.add(index)
                        on_tool_call(call)
        result.content = "".join(text) or None
        result.tool_calls = [calls[index] for index in sorted(calls)]
        for call in result.tool_calls:
            call.arguments = call.arguments or "{}"
        return result

    async def transcribe(self, audio: bytes, filename: str) -> str:
        if not self.config.transcription_model:
            raise LLMError("voice notes need [llm] transcription_model (e.g. whisper-1)")
        client = await self._ready()
        import openai

        try:
            result = await client.audio.transcriptions.create(
                model=self.config.transcription_model, file=(filename, audio)
            )
        except openai.APIError as exc:
            # The class and the endpoint's own words go to the log; the owner gets what to do.
            log.warning("transcription failed: %s: %s", type(exc).__name__, exc)
            raise self._transcription_error(exc) from None
        return result.text

    def _transcription_error(self, exc: Exception) -> LLMError:
        import openai

        again = "try again in a moment, or send it as text"
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(f"the transcription did not finish in time; {again}")
        if not isinstance(exc, openai.APIStatusError):
            return LLMError(f"the model endpoint cannot be reached; {again}")
        status = exc.status_code
        if status == 429 or status >= 500:
            return LLMError(f"the model endpoint answered {status}; {again}", status)
        return LLMError(
            f"the model endpoint refused it ({status}); send it as text, or check that the "
            f"endpoint transcribes audio with [llm] transcription_model "
            f"{self.config.transcription_model!r}",
            status,
        )

    async def list_models(self) -> list[str]:
        page = await (await self._ready()).models.list()
        return [model.id for model in page.data]

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()


async def _not_json_is_a_bad_gateway(response: Any) -> None:
    """A 2xx answer that is not JSON (nor a stream of events) is made a 502, so the SDK
    retries it like any 5xx instead of handing back the page as if it were a completion."""
    if not response.is_success:
        return
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return
    await response.aread()
    try:
        json.loads(response.content)
    except ValueError:
        response.status_code = 502


async def _quota_is_final(response: Any) -> None:
    """A 429 for a quota used up is told final, so the SDK does not retry it as it retries a
    rate limit: only the owner's billing can fix it."""
    if response.status_code != 429:
        return
    await response.aread()
    try:
        code = json.loads(response.content)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return
    if code == "insufficient_quota":
        response.headers["x-should-retry"] = "false"


def _parsed(completion: object) -> LLMResponse:
    """A whole (not streamed) completion, read leniently (see `_field`)."""
    choices = _field(completion, "choices", list)
    if not choices:
        raise LLMError("the model returned no answer")
    message = _field(choices[0], "message", dict)
    calls = [
        ToolCallRequest(
            _text(call, "id"),
            _text(_field(call, "function", dict), "name"),
            _text(_field(call, "function", dict), "arguments") or "{}",
        )
        for call in _field(message, "tool_calls", list)
        if _field(call, "type", str) in ("", "function")
    ]
    usage = _field(completion, "usage", dict)
    return LLMResponse(
        content=_field(message, "content", str) or None,
        tool_calls=calls,
        prompt_tokens=_field(usage, "prompt_tokens", int),
        completion_tokens=_field(usage, "completion_tokens", int),
        cached_tokens=_cached(usage),
        usage_reported=bool(usage),
    )


def _complete(call: ToolCallRequest) -> bool:
    """The call's arguments are a whole JSON object: nothing more can follow. (The next
    index starting is not taken as a sign: a provider may interleave the calls' pieces.)"""
    if not call.name or not call.arguments.rstrip().endswith("}"):
        return False  # cheap test first: a long argument is re-parsed only when it may end
    try:
        return isinstance(json.loads(call.arguments), dict)
    except ValueError:
        return False


def _transport_errors() -> tuple[type[Exception], ...]:
    """What the SDK's HTTP client raises when a connection breaks: httpx before openai 3,
    httpx2 since."""
    errors: list[type[Exception]] = [httpx.HTTPError]
    try:
        import httpx2
    except ImportError:
        pass
    else:
        errors.append(httpx2.HTTPError)
    return tuple(errors)
