"""An in-process scripted model for unit tests of the turn loop (no HTTP, no SDK).

It answers `complete` calls from a script of replies or from a function of the request, and
records every request. It implements `augure.llm.models.ChatModel`, the only thing a turn
needs of a model; the end-to-end tests use the HTTP fake in `openai.py` with the real SDK.
"""

from __future__ import annotations

import inspect
import json
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from augure.llm.client import LLMResponse, TextSink, ToolCallRequest, ToolCallSink
from augure.llm.faults import LLMError

Answer = LLMResponse | LLMError
Responder = Callable[["Request"], Answer | Awaitable[Answer]]


@dataclass
class Request:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    tool_choice: str | None
    streamed: bool
    model: str | None = None  # the override asked for (a subagent's model); None: the default

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools or []]

    @property
    def last(self) -> dict[str, Any]:
        return self.messages[-1]


def answer(text: str, tokens: tuple[int, int] = (10, 5)) -> LLMResponse:
    return LLMResponse(text, prompt_tokens=tokens[0], completion_tokens=tokens[1])


def call(name: str, /, **arguments: Any) -> LLMResponse:
    return calls((name, arguments))


def calls(*named: tuple[str, dict[str, Any]]) -> LLMResponse:
    requests = [
        ToolCallRequest(f"call_{name}_{n}", name, json.dumps(arguments))
        for n, (name, arguments) in enumerate(named)
    ]
    return LLMResponse(None, requests, prompt_tokens=10, completion_tokens=5)


class ScriptedModel:
    model = "scripted-model"

    def __init__(self, *script: Answer | Responder) -> None:
        self.script: deque[Answer | Responder] = deque(script)
        self.responder: Responder | None = None
        self.requests: list[Request] = []

    def then(self, *script: Answer | Responder) -> None:
        self.script.extend(script)

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
        request = Request(
            json.loads(json.dumps(messages)), tools, tool_choice, on_text is not None, model
        )
        self.requests.append(request)
        step = self.script.popleft() if self.script else self.responder
        if step is None:
            raise AssertionError(f"the model was asked more than scripted: {request.last}")
        result = step(request) if callable(step) else step
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, LLMError):
            raise result
        if on_text is not None and result.content:
            await on_text(result.content)
        if on_text is not None and on_tool_call is not None:  # streamed: each call as it ends
            for request_call in result.tool_calls:
                on_tool_call(request_call)
        return result
