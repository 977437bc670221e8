"""The one wrapper every model call goes through (docs/spend.md): the budget gate before the
call, `[llm.roles]` to pick the model for the kind of work, `[[llm.fallbacks]]` when that
model fails in a way another may not, and the spend of the answer after."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

from augure.config.budget import Prices, Roles
from augure.llm.budget import (
    HEARTBEAT,
    SKILL,
    SKILL_GENERATION,
    SUBAGENT,
    SUMMARY,
    TRANSCRIPTION,
    WORK,
    SpendGate,
    working_as,
)
from augure.llm.client import LLM, LLMError, LLMResponse, TextSink, ToolCallRequest, ToolCallSink

log = logging.getLogger(__name__)


class ChatModel(Protocol):
    """A model client: `LLM` over HTTP, or a scripted one in tests."""

    model: str

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_choice: str | None = None,
        on_text: TextSink | None = None,
        model: str | None = None,
        on_tool_call: ToolCallSink | None = None,
    ) -> LLMResponse: ...


@dataclass(frozen=True)
class Entry:
    """One model the wrapper may ask: the primary or a fallback, with its prices."""

    model: str
    client: ChatModel
    prices: Prices
    override: str | None = None  # a model name the client is not configured for


@dataclass(frozen=True)
class FallbackUsed:
    """The last time a fallback answered: for `/status`."""

    model: str  # the one that answered
    instead_of: str
    why: str
    at: float


class _Watched:
    """A streamed answer's sinks, noting whether anything reached the owner yet."""

    def __init__(self, on_text: TextSink, on_tool_call: ToolCallSink | None) -> None:
        self._on_text, self._on_tool_call = on_text, on_tool_call
        self.text: list[str] = []
        self.calls_started = False

    async def pass_text(self, piece: str) -> None:
        self.text.append(piece)
        await self._on_text(piece)

    def pass_call(self, call: ToolCallRequest) -> None:
        self.calls_started = True
        if self._on_tool_call is not None:
            self._on_tool_call(call)

    @property
    def started(self) -> bool:
        return bool(self.text) or self.calls_started


def _worth_another(exc: LLMError) -> bool:
    """Another model may answer: the fault is one a retry could fix, or the request did not
    fit. Never a refused key, model or address, nor a quota (the owner's to fix)."""
    return exc.fault is not None and (exc.fault.retryable or exc.fault.too_long)


class Models:
    """`ChatModel` for every caller: the turn loop, summaries, subagents, skills."""

    def __init__(
        self,
        entries: list[Entry],
        roles: Roles,
        gate: SpendGate | None = None,
        transcriber: LLM | None = None,
    ) -> None:
        self.entries = entries
        self.model = entries[0].model
        self.roles = roles
        self.gate = gate
        self.transcriber = transcriber
        self.last_fallback: FallbackUsed | None = None

    def chain(self, kind: str, model: str | None = None) -> list[Entry]:
        """The models to try in order: the one asked for (or the role's), then the others."""
        named = model or self._role(kind)
        if named is None:
            return list(self.entries)
        first = next((entry for entry in self.entries if entry.model == named), None)
        if first is None:  # a subagent's own model, on the primary's endpoint
            primary = self.entries[0]
            return [Entry(named, primary.client, Prices(), override=named)]
        return [first, *(entry for entry in self.entries if entry is not first)]

    def _role(self, kind: str) -> str | None:
        roles = {
            SUMMARY: self.roles.summary,
            HEARTBEAT: self.roles.heartbeat,
            SUBAGENT: self.roles.subagent,
            SKILL: self.roles.skill,
            SKILL_GENERATION: self.roles.skill,
        }
        return roles.get(kind)

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
        kind = WORK.get()
        chain = self.chain(kind, model)
        if self.gate is not None:
            await self.gate.check(kind, chain[0].model)
        watched = _Watched(on_text, on_tool_call) if on_text is not None else None
        for number, entry in enumerate(chain):
            try:
                response = await entry.client.complete(
                    messages,
                    tools,
                    tool_choice=tool_choice,
                    on_text=watched.pass_text if watched is not None else None,
                    model=entry.override,
                    on_tool_call=watched.pass_call if watched is not None else None,
                )
            except LLMError as exc:
                if watched is not None and watched.started:
                    return _finalised(watched, exc, entry.model)
                if number + 1 == len(chain) or not _worth_another(exc):
                    raise
                self._fell_back(chain[number + 1].model, entry.model, exc)
                continue
            response.model = entry.model
            if self.gate is not None:
                await self.gate.record(kind, entry.model, entry.prices, response)
            return response
        raise AssertionError("the chain is never empty")

    def _fell_back(self, model: str, instead_of: str, exc: LLMError) -> None:
        assert exc.fault is not None
        why = f"{instead_of} failed ({exc.fault.label}: {exc})"
        log.warning("falling back to %s: %s", model, why)
        self.last_fallback = FallbackUsed(model, instead_of, why, time.time())

    async def close(self) -> None:
        """Close the clients made for it (the transcriber, the primary, is closed by its
        owner)."""
        for entry in self.entries:
            if isinstance(entry.client, LLM) and entry.client is not self.transcriber:
                await entry.client.close()

    async def transcribe(self, audio: bytes, filename: str) -> str:
        if self.transcriber is None:
            raise LLMError("voice notes need the model endpoint, not configured here")
        name = self.transcriber.config.transcription_model or ""
        with working_as(TRANSCRIPTION):
            if self.gate is not None and name:
                await self.gate.check(TRANSCRIPTION, name)
            heard = await self.transcriber.transcribe(audio, filename)
            if self.gate is not None:
                # Priced by the minute, not by the token: counted, its cost unknown.
                await self.gate.record(TRANSCRIPTION, name, Prices(), LLMResponse(heard))
        return heard


def _finalised(watched: _Watched, exc: LLMError, model: str) -> LLMResponse:
    """A stream that broke after the owner saw some of it: never asked again (it would be
    shown twice); what came is the answer, with a note. Calls already started are the
    turn's to settle, so that failure stands."""
    if watched.calls_started:
        raise exc
    note = f"\n\n[cut off: {exc}]"
    return LLMResponse("".join(watched.text) + note, model=model)
