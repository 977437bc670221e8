"""Chat Completions through the openai SDK, which owns retries and backoff."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from augure.config import LLMConfig

if TYPE_CHECKING:
    from openai import AsyncOpenAI


TextSink = Callable[[str], Awaitable[None]]


class LLMError(Exception):
    """The endpoint failed after the SDK's retries; the message is fit for the owner."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


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

    @property
    def client(self) -> AsyncOpenAI:
        # Imported on first use: the SDK takes ~0.4 s to import, which would otherwise sit
        # between `augure run` and the first poll.
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=self.config.api_key.get_secret_value() if self.config.api_key else "-",
                base_url=self.config.base_url,
                timeout=self.config.request_timeout_seconds,
                max_retries=self.config.max_retries,
            )
        return self._client

    async def warm_up(self) -> None:
        await asyncio.to_thread(lambda: self.client)

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_choice: str | None = None,
        on_text: TextSink | None = None,
    ) -> LLMResponse:
        """One completion. With `on_text`, the answer is streamed and each text piece is
        passed to it as it arrives; the returned response is the same either way."""
        import openai
        from openai.types.chat import ChatCompletion

        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            request["tools"] = tools
            if tool_choice:
                request["tool_choice"] = tool_choice
        if self.config.max_tokens:
            request["max_tokens"] = self.config.max_tokens
        try:
            if on_text is not None:
                return await self._stream(request, on_text)
            # The SDK's lower-level `post` keeps its retries, timeouts and typed response, but
            # skips `create`'s TypedDict walk over every message, which costs ~0.1 ms per
            # history message per call and so grows with the conversation.
            completion = await self.client.post(
                "/chat/completions", cast_to=ChatCompletion, body=request
            )
        except openai.APITimeoutError:
            raise LLMError("the model did not answer in time") from None
        except openai.APIConnectionError:
            raise LLMError("the model endpoint cannot be reached") from None
        except openai.APIStatusError as exc:
            raise LLMError(
                f"the model endpoint answered {exc.status_code}", exc.status_code
            ) from None
        except httpx.HTTPError as exc:  # a stream cut off half-way
            raise LLMError(f"the model's answer was cut off ({type(exc).__name__})") from None
        if not completion.choices:
            raise LLMError("the model returned no answer")
        message = completion.choices[0].message
        calls = [
            ToolCallRequest(call.id, call.function.name, call.function.arguments or "{}")
            for call in message.tool_calls or []
            if call.type == "function"
        ]
        usage = completion.usage
        return LLMResponse(
            content=message.content,
            tool_calls=calls,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    async def _stream(self, request: dict[str, Any], on_text: TextSink) -> LLMResponse:
        from openai import AsyncStream
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        body = {**request, "stream": True, "stream_options": {"include_usage": True}}
        stream = await self.client.post(
            "/chat/completions",
            cast_to=ChatCompletion,
            body=body,
            stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        text: list[str] = []
        calls: dict[int, ToolCallRequest] = {}
        result = LLMResponse(content=None)
        async for chunk in stream:
            if chunk.usage:
                result.prompt_tokens = chunk.usage.prompt_tokens
                result.completion_tokens = chunk.usage.completion_tokens
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    await on_text(delta.content)
                for piece in delta.tool_calls or []:
                    call = calls.setdefault(piece.index, ToolCallRequest("", "", ""))
                    call.id = piece.id or call.id
                    if piece.function is not None:
                        call.name += piece.function.name or ""
                        call.arguments += piece.function.arguments or ""
        result.content = "".join(text) or None
        result.tool_calls = [calls[index] for index in sorted(calls)]
        for call in result.tool_calls:
            call.arguments = call.arguments or "{}"
        return result

    async def transcribe(self, audio: bytes, filename: str) -> str:
        import openai

        if not self.config.transcription_model:
            raise LLMError("voice notes need [llm] transcription_model (e.g. whisper-1)")
        try:
            result = await self.client.audio.transcriptions.create(
                model=self.config.transcription_model, file=(filename, audio)
            )
        except openai.APIError as exc:
            raise LLMError(f"transcription failed ({type(exc).__name__})") from None
        return result.text

    async def list_models(self) -> list[str]:
        page = await self.client.models.list()
        return [model.id for model in page.data]

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
