"""One turn: the owner's message in, tool calls run until the model answers in text."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Protocol

from augure.agent import history
from augure.agent.context import build_system_prompt
from augure.agent.llm import LLMError, LLMResponse, TextSink
from augure.agent.tally import Tally
from augure.config import Config
from augure.memory.store import MemoryStore
from augure.secrets import Redactor
from augure.store.audit import new_id
from augure.store.db import Store, TurnUsage
from augure.tools.base import Artifact, ToolResult
from augure.tools.execute_code import code_mode_schema
from augure.tools.executor import Executor, outside_sources, wrap_untrusted
from augure.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

Content = str | list[dict[str, Any]]


class ChatModel(Protocol):
    """What a turn needs of the model: `LLM` over HTTP, or a scripted one in tests."""

    model: str

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_choice: str | None = None,
        on_text: TextSink | None = None,
    ) -> LLMResponse: ...


class TurnStream(Protocol):
    """A channel's view of a turn as it happens (streaming previews)."""

    async def text(self, delta: str) -> None:
        """A piece of the model's answer."""

    async def restart(self) -> None:
        """A new model call begins: text shown so far was a step, not the answer."""


@dataclass
class Reply:
    text: str
    artifacts: list[Artifact] = field(default_factory=list)
    usage: TurnUsage | None = None
    turn_id: str | None = None


@dataclass(frozen=True)
class Turn:
    id: str
    chat_id: str
    origin: str
    awaits_delivery: bool


class Agent:
    def __init__(
        self,
        config: Config,
        store: Store,
        registry: ToolRegistry,
        executor: Executor,
        llm: ChatModel,
        memory: MemoryStore,
        redact: Redactor,
    ) -> None:
        self.config = config
        self.store = store
        self.registry = registry
        self.executor = executor
        self.llm = llm
        self.memory = memory
        self.redact = redact
        # Extra stable text for the system prompt, kept current by its owner (e.g. the names
        # and one-line descriptions of the active skills).
        self.catalog = ""
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._conversations: dict[str, history.Conversation] = {}

    async def handle(
        self,
        chat_id: str,
        content: Content,
        *,
        origin: str = "chat",
        stream: TurnStream | None = None,
        tools: Collection[str] | None = None,
        turn_id: str | None = None,
    ) -> Reply:
        """Run one turn. Turns of one chat run one at a time; chats run concurrently.
        `tools` limits the turn to those tools (a skill's declared ones). A caller that
        passes `turn_id` delivers the reply itself and confirms it with `delivered`; until
        then a restart finds the reply stored and unsent."""
        allowed = frozenset(tools) if tools is not None else None
        turn = Turn(turn_id or new_id(), chat_id, origin, awaits_delivery=turn_id is not None)
        async with self._locks[chat_id]:
            try:
                return await self._turn(turn, content, stream, allowed)
            except Exception:
                # The caller reports the failure; a restart must not report it again. (A
                # cancelled turn, at shutdown, stays `running`: the next start reports it.)
                with contextlib.suppress(Exception):
                    await self.store.turn_failed(turn.id)
                raise

    async def delivered(self, turn_id: str) -> None:
        await self.store.turn_delivered(turn_id)

    async def new_conversation(self, chat_id: str) -> None:
        async with self._locks[chat_id]:
            await self.store.close_conversation(chat_id)
            self._conversations.pop(chat_id, None)

    async def _conversation(self, chat_id: str) -> history.Conversation:
        if chat_id not in self._conversations:
            self._conversations[chat_id] = await history.load(self.store, chat_id)
        return self._conversations[chat_id]

    async def _remember(
        self, conversation: history.Conversation, *messages: dict[str, Any]
    ) -> None:
        conversation.messages.extend(messages)
        await self.store.add_messages(conversation.id, list(messages))

    async def _turn(
        self,
        turn: Turn,
        content: Content,
        stream: TurnStream | None,
        allowed: frozenset[str] | None,
    ) -> Reply:
        chat_id = turn.chat_id
        conversation = await self._conversation(chat_id)
        # Images go to the model for this turn only; history keeps a text note, so a photo is
        # not sent (and paid for) again on every later turn.
        content = self._clean(content)
        stored = {"role": "user", "content": history.text_only(content)}
        # Stored with its turn before anything else happens: a crash from here on loses
        # nothing the owner said, and the restart knows a reply was owed.
        await self.store.begin_turn(turn.id, chat_id, turn.origin, conversation.id, stored)
        conversation.messages.append(stored)
        tally = Tally()
        await self._compact(conversation, tally)  # keeps the newest owner message whole
        asked_at = len(conversation.messages) - 1
        conversation.messages[asked_at] = {"role": "user", "content": content}
        system = build_system_prompt(
            self.config,
            self.memory,
            self.registry.hints(),
            [] if self.config.code_mode.enabled else self.registry.deferred(),
            self.catalog,
        )
        loaded = conversation.loaded_tools()
        schemas = self._schemas(loaded, allowed)
        ctx = dataclasses.replace(
            self.registry.context,
            chat_id=chat_id,
            origin=turn.origin,
            turn_id=turn.id,
            allowed_tools=allowed,
        )
        artifacts: list[Artifact] = []
        mistaken: set[str] = set()  # calls the model got wrong, pruned once it has seen them
        max_loops = self.config.agent.max_loops
        budget = self.config.agent.token_budget

        async def finish(text: str, answer: dict[str, Any] | None = None) -> Reply:
            # The model's final answer is stored with the turn's other last writes, in one go.
            last = [answer] if answer is not None else []
            conversation.messages.extend(last)
            conversation.messages[asked_at] = {
                "role": "user",
                "content": history.text_only(conversation.messages[asked_at]["content"]),
            }
            if mistaken:
                conversation.messages = history.prune(conversation.messages, mistaken)
                await self.store.replace_messages(conversation.id, conversation.messages)
                last = []
            usage = None
            if tally.calls:
                usage = tally.usage(
                    self.llm.model,
                    system.text,
                    system.memory_chars,
                    schemas,
                    text,
                    conversation.messages,
                )
            reply = Reply(self.redact(text), artifacts, usage, turn.id)
            await self.store.finish_turn(
                turn.id,
                reply.text,
                delivered=not turn.awaits_delivery,
                chat_id=chat_id,
                conversation_id=conversation.id,
                messages=last,
                usage=usage,
            )
            return reply

        async def ask(**options: Any) -> LLMResponse:
            if stream is not None:
                if tally.calls:
                    await stream.restart()
                options["on_text"] = stream.text
            messages = [system.as_message(), *conversation.messages]
            try:
                response = await self.llm.complete(messages, schemas, **options)
            except LLMError as exc:
                if exc.status != 400 or not history.has_images(conversation.messages):
                    raise
                # Most likely a model without vision: say so instead of failing the turn.
                conversation.messages = history.without_images(conversation.messages)
                messages = [system.as_message(), *conversation.messages]
                response = await self.llm.complete(messages, schemas, **options)
            tally.add(response)
            return response

        for _ in range(max_loops):
            if budget and tally.total >= budget:
                return await finish(
                    f"I stopped: this turn used {tally.total} tokens, over the budget of "
                    f"{budget} (agent.token_budget)."
                )
            try:
                response = await ask()
            except LLMError as exc:
                log.warning("LLM call failed: %s", exc)
                return await finish(f"Sorry, I could not get an answer: {exc}. Please try again.")
            if not response.tool_calls:
                empty = "(The model returned an empty answer.)"
                return await finish(response.content or empty, response.as_message())
            await self._remember(conversation, response.as_message())
            calls = [(call.name, call.arguments) for call in response.tool_calls]
            results = await self.executor.run_calls(calls, ctx)
            for call, result in zip(response.tool_calls, results, strict=True):
                artifacts.extend(result.artifacts)
                if result.prunable:
                    mistaken.add(call.id)
                if call.name == "load_tools" and result.success:
                    loaded |= set(json.loads(call.arguments).get("names", []))
                    schemas = self._schemas(loaded, allowed)
            await self._remember(
                conversation,
                *(tool_message(c.id, r) for c, r in zip(response.tool_calls, results, strict=True)),
            )

        # Out of rounds: one last call that may not use tools, so the owner gets an answer.
        note = f"(I stopped after {max_loops} rounds of tool calls; agent.max_loops.)"
        try:
            response = await ask(tool_choice="none")
        except LLMError:
            return await finish(note)
        await self._remember(conversation, {"role": "assistant", "content": response.content})
        return await finish(f"{response.content}\n\n{note}" if response.content else note)

    def _schemas(
        self, loaded: set[str], allowed: frozenset[str] | None = None
    ) -> list[dict[str, Any]]:
        if allowed is not None:  # a skill's turn: its declared tools, loaded or not
            return [self.registry.schema(t) for t in self.registry.list() if t.name in allowed]
        # Code mode offers one tool whose description carries every tool as a typed `api.*`
        # function: one model call can then chain several tools.
        if self.config.code_mode.enabled:
            return [code_mode_schema(self.registry)]
        return self.registry.to_function_schemas(loaded)

    async def _compact(self, conversation: history.Conversation, tally: Tally) -> None:
        """Keep the history under agent.history_tokens: shorten, then summarise old turns."""
        limit = self.config.agent.history_tokens
        # The newest message is the owner's, just asked and stored: never compacted away.
        messages, newest = conversation.messages[:-1], conversation.messages[-1]
        if history.estimate_tokens(messages) <= limit:
            return
        messages = history.shorten_tool_results(messages)
        if history.estimate_tokens(messages) > limit:
            older, recent = history.split_for_summary(messages, limit // 2)
            if older:
                try:
                    summary = await self.llm.complete(
                        [
                            {"role": "system", "content": history.SUMMARY_PROMPT},
                            {"role": "user", "content": history.transcript(older)},
                        ]
                    )
                except LLMError as exc:
                    log.warning("could not summarise the history: %s", exc)
                else:
                    tally.add(summary)
                    text = summary.content or ""
                    # A summary of outside content is outside content: it keeps its marking.
                    sources = outside_sources(older, self.registry)
                    if sources:
                        text = wrap_untrusted(text, "summary of " + ", ".join(sources))
                    note = f"Summary of the earlier conversation:\n{text}"
                    messages = [{"role": "system", "content": note}, *recent]
        conversation.messages = [*messages, newest]
        await self.store.replace_messages(conversation.id, conversation.messages)

    def _clean(self, content: Content) -> Content:
        return self.redact(content) if isinstance(content, str) else self.redact.value(content)


def tool_message(call_id: str, result: ToolResult) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": result.output}
