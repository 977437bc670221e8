"""The one wrapper every model call goes through (docs/reference/spend.md): the budget gate
before the call, `[llm.roles]` to pick the model for the kind of work, `[[llm.fallbacks]]`
when that model fails in a way another may not, and the spend of the answer after;
`build_models` makes it from the configuration."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from augure.config.llm import Roles
from augure.config.settings import Config
from augure.config.spend import PRICE_KEYS, Priced, Prices
from augure.llm.client import LLM, LLMResponse, TextSink, ToolCallRequest, ToolCallSink
from augure.llm.faults import LLMError
from augure.llm.spend import (
    EMBEDDING,
    HEARTBEAT,
    SKILL,
    SKILL_GENERATION,
    SUBAGENT,
    SUMMARY,
    TRANSCRIPTION,
    WORK,
    SpendGate,
    own_models,
    working_as,
)

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
    setting: str = f"[llm] {PRICE_KEYS}"  # what prices it, for the refusal of an unpriced one

    @property
    def unpriced(self) -> str | None:
        """The setting to add when the model has no price; None when it has one."""
        return None if self.prices.priced else self.setting


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
        own: Mapping[str, Priced] | None = None,
    ) -> None:
        self.entries = entries
        self.model = entries[0].model
        self.roles = roles
        self.gate = gate
        # The primary's HTTP client: transcriptions and embeddings go to its endpoint.
        self.transcriber = transcriber
        # Models named by a caller but not in `entries` (a subagent's own, the embeddings'),
        # with the prices their own settings give.
        self.own = dict(own or {})
        self.last_fallback: FallbackUsed | None = None

    def chain(self, kind: str, model: str | None = None) -> list[Entry]:
        """The models to try in order: the one asked for (or the role's), then the others."""
        named = model or self._role(kind)
        if named is None:
            return list(self.entries)
        first = next((entry for entry in self.entries if entry.model == named), None)
        if first is None:  # a subagent's own model, on the primary's endpoint
            priced = self.priced(named)
            primary = self.entries[0].client
            return [Entry(named, primary, priced.prices, override=named, setting=priced.setting)]
        return [first, *(entry for entry in self.entries if entry is not first)]

    def priced(self, model: str) -> Priced:
        """A caller's own model, priced by its settings; unknown: a subagent's, unpriced."""
        return self.own.get(model) or Priced(model, Prices(), f"[agents.NAME] {PRICE_KEYS}")

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
        watched = _Watched(on_text, on_tool_call) if on_text is not None else None
        for number, entry in enumerate(chain):
            if self.gate is not None:  # each model asked, a fallback too: its price may lack
                await self.gate.check(kind, entry.model, entry.unpriced)
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
                    cut = _finalised(watched, exc, entry.model)
                    await self._count(kind, entry, cut, {"messages": messages, "tools": tools})
                    return cut
                if number + 1 == len(chain) or not _worth_another(exc):
                    raise
                self._fell_back(chain[number + 1].model, entry.model, exc)
                continue
            response.model = entry.model
            await self._count(kind, entry, response, {"messages": messages, "tools": tools})
            return response
        raise AssertionError("the chain is never empty")

    async def _count(self, kind: str, entry: Entry, response: LLMResponse, sent: object) -> None:
        if self.gate is not None:
            await self.gate.record(kind, entry.model, entry.prices, response, sent)

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

    async def embed(self, model: str, texts: list[str]) -> list[list[float]]:
        """The texts' vectors, in order, from the endpoint's `/embeddings`: checked and
        counted like any model call, billed to `embedding` at `[recall]`'s price."""
        if self.transcriber is None:
            raise LLMError("embeddings need the model endpoint, not configured here")
        priced = self.priced(model)
        with working_as(EMBEDDING):
            if self.gate is not None:
                unpriced = None if priced.prices.priced else priced.setting
                await self.gate.check(EMBEDDING, model, unpriced)
            await self.transcriber.warm_up()
            answer = await self.transcriber.client.embeddings.create(model=model, input=texts)
            if self.gate is not None:
                usage = getattr(answer, "usage", None)
                counted = LLMResponse(
                    None,
                    prompt_tokens=usage.prompt_tokens if usage else 0,
                    usage_reported=usage is not None,
                )
                await self.gate.record(EMBEDDING, model, priced.prices, counted, texts)
        return [item.embedding for item in sorted(answer.data, key=lambda item: item.index)]

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
    # Tokens were spent, but no usage came: the spend counts them estimated.
    return LLMResponse("".join(watched.text) + note, model=model, usage_reported=False)


def build_models(config: Config, llm: LLM, primary: ChatModel, gate: SpendGate | None) -> Models:
    """The wrapper every caller uses: `primary` answers first (the HTTP client, or a scripted
    model in tests), then each `[[llm.fallbacks]]` entry on its own client."""
    entries = [Entry(config.llm.model, primary, config.llm)]
    for fallback in config.llm.fallbacks:
        own = config.llm.model_copy(
            update={
                "model": fallback.model,
                "base_url": fallback.base_url or config.llm.base_url,
                "api_key": fallback.api_key or config.llm.api_key,
                "fallbacks": [],
            }
        )
        setting = f"{PRICE_KEYS} in its [[llm.fallbacks]] entry"
        entries.append(Entry(fallback.model, LLM(own), fallback, setting=setting))
    return Models(entries, config.llm.roles, gate, transcriber=llm, own=own_models(config))
