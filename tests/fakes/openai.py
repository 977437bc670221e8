"""A scripted OpenAI-compatible server for tests.

It speaks enough of the Chat Completions, Models and Audio Transcriptions APIs for the
real ``openai`` SDK to talk to it::

    async with FakeOpenAI() as fake:
        fake.script(text("hello"), tool("search", {"q": "x"}))
        client = AsyncOpenAI(base_url=fake.base_url, api_key="test")
        ...
        assert fake.requests[0]["messages"][-1]["content"] == "hi"

Scripted replies are consumed in FIFO order, one per chat completion request; when the
queue is empty ``responder`` (if set) builds the reply, otherwise the server answers 500
so that a test which forgot to script a reply fails visibly. ``context_limit`` makes it
refuse, as the real API does, a request longer than that many (estimated) tokens, with
OpenAI's own 400 ``context_length_exceeded`` body; ``too_long()`` and ``quota_exhausted()``
script those bodies (the latter OpenAI's 429 ``insufficient_quota``). ``html()`` scripts a web page
instead of JSON (a proxy's 502, a captive portal's 200), and ``Reply.cut_after`` drops a
streamed answer's connection half-way. ``ToolCall.pause`` holds a stream back before a call,
and ``streams`` records when each streamed answer began and ended (``time.monotonic()``).
``script_for(model, ...)`` scripts the replies to requests naming that model only (a
fallback's, a role's), before the shared queue; ``Reply.cached_tokens`` reports that many
prompt tokens as served from the cache, in ``usage.prompt_tokens_details`` as OpenAI does.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import struct
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aiohttp import BodyPartReader, web

from tests.fakes import concepts
from tests.fakes.audio import ogg_opus, wav
from tests.fakes.server import FakeServer

__all__ = [
    "NO_REPLY_MESSAGE",
    "STOPPED_MESSAGE",
    "FakeOpenAI",
    "Reply",
    "ToolCall",
    "error",
    "html",
    "quota_exhausted",
    "text",
    "too_long",
    "tool",
    "tools",
]

NO_REPLY_MESSAGE = "FakeOpenAI: no scripted reply left"
STOPPED_MESSAGE = "FakeOpenAI: server stopped"

_ERROR_TYPES: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    413: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}


@dataclass
class ToolCall:
    name: str
    arguments: str | dict[str, Any]  # a dict is sent as json.dumps(arguments)
    id: str | None = None  # None → "call_N", numbered per server
    # Streaming: seconds of silence before this call's first chunk (a model still writing):
    # the calls before it are complete in the stream well before the response ends.
    pause: float = 0.0


@dataclass
class Reply:
    """One scripted answer to a chat completion request."""

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    status: int = 200
    error_message: str = "scripted error"
    delay: float = 0.0
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens)
    chunk_size: int = 8
    chunk_delay: float = 0.0
    finish_reason: str | None = None  # default "tool_calls" if tool_calls else "stop"
    html: str | None = None  # a web page instead of JSON, as a proxy in front may send
    cut_after: int | None = None  # streaming: drop the connection after this many chunks
    # An error body's own `type`, `code` and `param`, where the status's usual ones differ.
    error_fields: dict[str, str] | None = None
    cached_tokens: int | None = None  # usage.prompt_tokens_details.cached_tokens
    # No `usage` at all, streamed or not, as some OpenAI-compatible servers answer.
    no_usage: bool = False


def text(s: str, **kw: Any) -> Reply:
    return Reply(text=s, **kw)


def tool(name: str, arguments: str | dict[str, Any], **kw: Any) -> Reply:
    return Reply(tool_calls=[ToolCall(name, arguments)], **kw)


def tools(*calls: ToolCall, text: str | None = None) -> Reply:
    return Reply(text=text, tool_calls=list(calls))


def error(status: int, message: str = "scripted error") -> Reply:
    return Reply(status=status, error_message=message)


def too_long(limit: int = 128_000, used: int = 130_000) -> Reply:
    """OpenAI's answer to a request that does not fit the model's context window."""
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {used} tokens. Please reduce the length of the messages."
    )
    fields = {"type": "invalid_request_error", "code": "context_length_exceeded"}
    return Reply(status=400, error_message=message, error_fields={**fields, "param": "messages"})


def quota_exhausted() -> Reply:
    """OpenAI's answer once the account's credit or monthly limit is used up."""
    message = (
        "You exceeded your current quota, please check your plan and billing details. For "
        "more information on this error, read the docs: "
        "https://platform.openai.com/docs/guides/error-codes/api-errors."
    )
    fields = {"type": "insufficient_quota", "code": "insufficient_quota"}
    return Reply(status=429, error_message=message, error_fields=fields)


def html(status: int = 200, page: str | None = None) -> Reply:
    """An HTML page with ``status``: what a proxy or a captive portal answers instead."""
    title = "502 Bad Gateway" if status == 502 else "Welcome"
    page = page or f"<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"
    return Reply(status=status, html=page)


def _error_body(status: int, message: str, fields: dict[str, str] | None = None) -> dict[str, Any]:
    err_type, code = _ERROR_TYPES.get(
        status, ("server_error" if status >= 500 else "api_error", None)
    )
    body = {"message": message, "type": err_type, "param": None, "code": code}
    return {"error": body | (fields or {})}


def _error_response(
    status: int, message: str, fields: dict[str, str] | None = None
) -> web.Response:
    return web.json_response(_error_body(status, message, fields), status=status)


def _estimated_tokens(body: dict[str, Any]) -> int:
    return len(json.dumps(body.get("messages", []))) // 4


def _pieces(s: str, size: int) -> list[str]:
    size = max(1, size)
    return [s[i : i + size] for i in range(0, len(s), size)]


class FakeOpenAI(FakeServer):
    # handler_cancellation: a client that gives up (timeout test) cancels its handler.
    runner_options: ClassVar[dict[str, Any]] = {
        "handler_cancellation": True,
        "shutdown_timeout": 0.5,
    }

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.transcriptions: list[dict[str, Any]] = []
        # Every /embeddings request body, as received.
        self.embedding_requests: list[dict[str, Any]] = []
        self.transcription_text: str = "transcribed text"
        # An error to answer each transcription with instead (status and message, as `error`).
        self.transcription_failure: Reply | None = None
        # Seconds each transcription takes before it answers (a long voice note).
        self.transcription_delay: float = 0.0
        self.models: list[str] = ["test-model"]
        # /audio/speech: each request's JSON body; an error to answer with instead; and the
        # one format a server returns whatever is asked (None: the format asked for).
        self.speeches: list[dict[str, Any]] = []
        self.speech_failure: Reply | None = None
        self.speech_only: str | None = None
        # (first byte written, [DONE] written) of each streamed answer, in time.monotonic().
        self.streams: list[tuple[float, float]] = []
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.context_limit: int | None = None  # tokens, estimated as `_usage` does
        self.base_url: str = ""
        self._queue: deque[Reply] = deque()
        self._queues: dict[str, deque[Reply]] = {}  # by the model a request names
        self._call_counter = 0
        self._closing = asyncio.Event()
        self._seen = asyncio.Condition()

    # -- lifecycle -------------------------------------------------------------------------
    def build_app(self) -> web.Application:
        self._closing.clear()
        app = web.Application(middlewares=[self._auth])
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/v1/audio/speech", self._speech)
        return app

    def _started(self) -> None:
        self.base_url = f"{self.origin}/v1"

    def _stopping(self) -> None:
        self._closing.set()  # wake handlers sleeping on `delay` / `chunk_delay`

    # -- test-side API -----------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        self._queue.extend(replies)

    def script_for(self, model: str, *replies: Reply) -> None:
        """Replies to requests naming `model` only, taken before the shared queue."""
        self._queues.setdefault(model, deque()).extend(replies)

    def pending(self) -> int:
        return len(self._queue)

    async def wait_requests(self, n: int, timeout: float = 5.0) -> None:
        """Wait until at least ``n`` chat completion requests were received."""
        try:
            async with self._seen:
                await asyncio.wait_for(
                    self._seen.wait_for(lambda: len(self.requests) >= n), timeout
                )
        except TimeoutError:
            raise TimeoutError(
                f"FakeOpenAI: expected {n} requests within {timeout}s, got {len(self.requests)}"
            ) from None

    # -- handlers ----------------------------------------------------------------------------
    @web.middleware
    async def _auth(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            return _error_response(401, "You didn't provide an API key (Authorization: Bearer).")
        return await handler(request)

    async def _sleep(self, seconds: float) -> bool:
        """Sleep ``seconds``; return False (early) if the server is stopping."""
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), seconds)
        return not self._closing.is_set()

    async def _models(self, request: web.Request) -> web.Response:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
        return web.json_response({"object": "list", "data": data})

    async def _transcribe(self, request: web.Request) -> web.Response:
        fields: dict[str, str] = {}
        filename, content = "", b""
        async for part in await request.multipart():
            if not isinstance(part, BodyPartReader):
                continue
            if part.name == "file":
                filename, content = part.filename or "", bytes(await part.read())
            elif part.name:
                fields[part.name] = await part.text()
        self.transcriptions.append(
            {"model": fields.get("model"), "filename": filename, "bytes": content}
        )
        if not await self._sleep(self.transcription_delay):
            return _error_response(503, STOPPED_MESSAGE)
        failure = self.transcription_failure
        if failure is not None:
            return _error_response(failure.status, failure.error_message, failure.error_fields)
        if fields.get("response_format") in ("text", "srt", "vtt"):
            return web.Response(text=self.transcription_text, content_type="text/plain")
        return web.json_response({"text": self.transcription_text})

    async def _embeddings(self, request: web.Request) -> web.Response:
        """OpenAI's shape, as strictly: `model` and `input` (a string or a list of at most
        2048 non-empty strings) required; `encoding_format` float or base64 (the SDK asks
        for base64 unless told). Vectors come from the concept table (tests/fakes/concepts)."""
        body = await request.json()
        self.embedding_requests.append(body)
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        valid = isinstance(texts, list) and 0 < len(texts) <= 2048
        if not valid or not all(isinstance(t, str) and t for t in texts):
            return _error_response(400, "'input' must be a non-empty string or list of them")
        if not isinstance(body.get("model"), str) or not body["model"]:
            return _error_response(400, "you must provide a model parameter")
        encoding = body.get("encoding_format", "float")
        if encoding not in ("float", "base64"):
            return _error_response(400, f"invalid encoding_format {encoding!r}")
        data = []
        for index, text in enumerate(texts):
            vector = concepts.embed(text)
            packed: Any = vector
            if encoding == "base64":
                packed = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": packed})
        tokens = sum(len(text.split()) for text in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return web.json_response(
            {"object": "list", "data": data, "model": body["model"], "usage": usage}
        )

    async def _speech(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.speeches.append(body)
        if not body.get("input") or not body.get("model") or not body.get("voice"):
            return _error_response(400, "input, model and voice are required")
        if len(body["input"]) > 4096:
            return _error_response(400, "input is longer than 4096 characters")
        failure = self.speech_failure
        if failure is not None:
            return _error_response(failure.status, failure.error_message, failure.error_fields)
        kind = self.speech_only or body.get("response_format", "mp3")
        audio = {"opus": (ogg_opus(), "audio/ogg"), "wav": (wav(), "audio/wav")}.get(
            kind, (b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb" * 64, "audio/mpeg")
        )
        return web.Response(body=audio[0], content_type=audio[1])

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error_response(400, "FakeOpenAI: request body is not valid JSON")
        async with self._seen:
            self.requests.append(body)
            self._seen.notify_all()
        if self.context_limit is not None:
            # Refused before any scripted reply is used, as the real API refuses before
            # generating anything.
            used = _estimated_tokens(body)
            if used > self.context_limit:
                refusal = too_long(self.context_limit, used)
                return _error_response(400, refusal.error_message, refusal.error_fields)
        own = self._queues.get(str(body.get("model")))
        if own:
            reply = own.popleft()
        elif self._queue:
            reply = self._queue.popleft()
        elif self.responder is not None:
            reply = self.responder(body)
        else:
            return _error_response(500, NO_REPLY_MESSAGE)
        if not await self._sleep(reply.delay):
            return _error_response(503, STOPPED_MESSAGE)
        if reply.html is not None:
            return web.Response(status=reply.status, text=reply.html, content_type="text/html")
        if reply.status != 200:
            return _error_response(reply.status, reply.error_message, reply.error_fields)

        calls: list[dict[str, Any]] = []
        for c in reply.tool_calls:
            args = c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)
            fn = {"name": c.name, "arguments": args}
            calls.append({"id": c.id or self._next_call_id(), "type": "function", "function": fn})
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        usage = self._usage(body, reply, calls)
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "system_fingerprint": "fp_fake",
        }
        if body.get("stream"):
            return await self._stream(request, base, reply, calls, finish, usage, body)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text, "refusal": None}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        whole = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        if reply.no_usage:
            del whole["usage"]
        return web.json_response(whole)

    def _next_call_id(self) -> str:
        self._call_counter += 1
        return f"call_{self._call_counter}"

    @staticmethod
    def _usage(body: dict[str, Any], reply: Reply, calls: list[dict[str, Any]]) -> dict[str, Any]:
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt = _estimated_tokens(body)
            produced = (reply.text or "") + "".join(c["function"]["arguments"] for c in calls)
            completion = len(produced) // 4
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if reply.cached_tokens is not None:
            cached = {"cached_tokens": reply.cached_tokens, "audio_tokens": 0}
            usage["prompt_tokens_details"] = cached
            usage["completion_tokens_details"] = {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            }
        return usage

    async def _stream(
        self,
        request: web.Request,
        base: dict[str, Any],
        reply: Reply,
        calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, Any],
        body: dict[str, Any],
    ) -> web.StreamResponse:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        include_usage = include_usage and not reply.no_usage
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        began = time.monotonic()
        events = self._chunks(base, reply, calls, finish, usage, include_usage)
        pauses = self._pauses(reply, calls)
        for sent, event in enumerate(events, 1):
            await resp.write(f"data: {json.dumps(event)}\n\n".encode())
            wait = reply.chunk_delay + pauses.get(sent, 0.0)
            if sent == reply.cut_after or not await self._sleep(wait):
                if request.transport is not None:  # cut the stream: the client sees an error
                    request.transport.close()
                return resp
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        self.streams.append((began, time.monotonic()))
        return resp

    @staticmethod
    def _pauses(reply: Reply, calls: list[dict[str, Any]]) -> dict[int, float]:
        """Seconds to wait after the n-th event (1-based) of `_chunks`: a call's pause falls
        just before its first chunk, i.e. after the previous event."""
        pauses: dict[int, float] = {}
        sent = 1 + len(_pieces(reply.text or "", reply.chunk_size))  # the role chunk, the text
        for scripted, call in zip(reply.tool_calls, calls, strict=True):
            if scripted.pause:
                pauses[sent] = scripted.pause
            sent += 1 + len(_pieces(call["function"]["arguments"], reply.chunk_size))
        return pauses

    @staticmethod
    def _chunks(
        base: dict[str, Any],
        reply: Reply,
        calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, Any],
        include_usage: bool,
    ) -> list[dict[str, Any]]:
        extra: dict[str, Any] = {"usage": None} if include_usage else {}

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            return {**base, "object": "chat.completion.chunk", "choices": [choice], **extra}

        first_content = "" if reply.text is not None else None
        out = [chunk({"role": "assistant", "content": first_content, "refusal": None})]
        out += [chunk({"content": piece}) for piece in _pieces(reply.text or "", reply.chunk_size)]
        for i, call in enumerate(calls):
            fn = call["function"]
            head = {"index": i, "id": call["id"], "type": "function"}
            out.append(
                chunk({"tool_calls": [{**head, "function": {"name": fn["name"], "arguments": ""}}]})
            )
            out += [
                chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
                for piece in _pieces(fn["arguments"], reply.chunk_size)
            ]
        out.append(chunk({}, finish))
        if include_usage:
            out.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        return out


if __name__ == "__main__":
    from tests.fakes.openai_cli import main

    main()
