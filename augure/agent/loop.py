"""One turn: the owner's message in, tool calls run until the model answers in text."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, cast

from augure.agent import history, offer
from augure.agent.compaction import compact
from augure.agent.context import now_note
from augure.agent.dispatch import Dispatch
from augure.agent.later import take_later
from augure.agent.personas import Personas
from augure.agent.taint import reading_of
from augure.agent.tally import Tally
from augure.agent.turn import (
    NOTHING_CARRIED,
    Carried,
    Later,
    Reply,
    Turn,
    TurnState,
    TurnStream,
    Wipe,
    working_for,
)
from augure.common.caller import Caller, Grants
from augure.common.content import Content
from augure.config.settings import Config
from augure.host.secrets import Redactor
from augure.llm.client import LLMResponse
from augure.llm.faults import LLMError, explain, for_owner
from augure.llm.models import ChatModel
from augure.memory.store import MemoryStore
from augure.skills.model import Catalog
from augure.store.audit import new_id
from augure.store.state import Store
from augure.tools.base import RunContext, ToolResult
from augure.tools.executor import Executor
from augure.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


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
        context: RunContext,
        catalog: Catalog | None = None,
        personas: Personas | None = None,
        tools_ready: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.config, self.store, self.registry = config, store, registry
        self.executor, self.llm = executor, llm
        self.memory, self.redact = memory, redact
        self.context = context  # what every tool may use: each turn adds its own caller
        # The active skills, kept current by the skill service, in the prompt's stable part.
        self.catalog = catalog or Catalog()
        self.personas = personas
        self.tools_ready = tools_ready
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._conversations: dict[str, history.Conversation] = {}
        # `Allow in this chat`: what the owner allowed per chat, until /new or a restart.
        self._grants: defaultdict[str, Grants] = defaultdict(Grants)

    async def handle(
        self,
        chat_id: str,
        content: Content,
        *,
        origin: str | Sequence[str] | Caller = "chat",
        stream: TurnStream | None = None,
        tools: Collection[str] | None = None,
        turn_id: str | None = None,
        asked_from: str | None = None,
        follow_ups: Sequence[Content] = (),
        received: Sequence[int] = (),
        carried: Carried = NOTHING_CARRIED,
        later: Later | None = None,
    ) -> Reply:
        """Run one turn. Turns of one chat run one at a time; chats run concurrently.
        `follow_ups` came after `content` and are answered with it (docs/telegram.md).
        `origin`: the turn's chain (`job`, `job>skill:ID`), or its whole `Caller` (a report's);
        `tools` limits the turn to those tools (a skill's declared ones); `asked_from` names
        the outside source of `content` when it is not the owner's words. A caller that
        passes `turn_id` delivers the reply itself and confirms it with `delivered`; until
        then a restart finds the reply stored and unsent. `received`: the inbox rows of the
        messages, taken out of the inbox as the turn is stored (docs/reference/durability.md).
        `carried`: what the unit that wrote `content` had read (a job's maker); `later` gives
        what the owner sent meanwhile, asked before each further model call."""
        caller = working_for(origin, chat_id, tools, self._grants)
        awaits = turn_id is not None
        turn = Turn(
            turn_id or new_id(), chat_id, caller, awaits, asked_from, (*received,), carried, later
        )
        async with self._locks[chat_id]:
            try:
                return await self._turn(turn, [content, *follow_ups], stream)
            except Exception:
                # The caller reports the failure; a restart must not report it again. (A
                # cancelled turn, at shutdown, stays `running`: the next start reports it.)
                with contextlib.suppress(Exception):
                    await self.store.turn_failed(turn.id)
                raise

    def busy(self, chat_id: str) -> bool:
        """A turn of this chat is running (proactive work waits for another time)."""
        return self._locks[chat_id].locked()

    def lock(self, chat_id: str) -> asyncio.Lock:
        """Held while a turn of this chat runs; held by work that must not overlap one."""
        return self._locks[chat_id]

    async def delivered(self, turn_id: str) -> None:
        await self.store.turn_delivered(turn_id)

    async def new_conversation(self, chat_id: str, wipe: Wipe | None = None) -> None:
        async with self._locks[chat_id]:
            await (wipe or self.store.close_conversation)(chat_id)
            self._conversations.pop(chat_id, None)
            self._grants[chat_id].clear()

    async def _conversation(self, chat_id: str) -> history.Conversation:
        if chat_id not in self._conversations:
            self._conversations[chat_id] = await history.load(self.store, chat_id)
        return self._conversations[chat_id]

    async def _remember(
        self, conversation: history.Conversation, *messages: dict[str, Any]
    ) -> None:
        conversation.messages.extend(messages)
        await self.store.add_messages(conversation.id, list(messages))

    async def _turn(self, turn: Turn, asked: list[Content], stream: TurnStream | None) -> Reply:
        state = await self._begin(turn, asked, stream)
        max_loops = self.config.agent.max_loops
        budget = self.config.agent.token_budget
        for step in range(max_loops):
            if step:  # what the owner sent meanwhile, read before the model answers
                await take_later(state, self.store, self._clean)
            if budget and state.tally.total >= budget:
                return await self._finish(
                    state,
                    f"I stopped: this turn used {state.tally.total} tokens, over the budget of "
                    f"{budget} (agent.token_budget).",
                )
            # Calls start as they complete in the stream; none outlives this block.
            async with Dispatch(self.executor, state.ctx) as dispatch:
                try:
                    response = await self._ask(state, dispatch)
                except LLMError as exc:
                    await dispatch.settle()
                    log.warning("LLM call failed: %s", explain(exc, self.config))
                    return await self._finish(state, for_owner(exc, self.config))
                if not response.tool_calls:
                    answer = response.content or "(The model returned an empty answer.)"
                    return await self._finish(state, answer, self._said(response.as_message()))
                await self._remember(state.conversation, self._said(response.as_message()))
                await self._run_tools(state, response, dispatch)

        # Out of rounds: one last call that may not use tools, so the owner gets an answer.
        note = f"(I stopped after {max_loops} rounds of tool calls; agent.max_loops.)"
        try:
            response = await self._ask(state, tool_choice="none")
        except LLMError:
            return await self._finish(state, note)
        last = self._said({"role": "assistant", "content": response.content})
        text = f"{response.content}\n\n{note}" if response.content else note
        return await self._finish(state, text, last)

    async def _begin(
        self, turn: Turn, asked: list[Content], stream: TurnStream | None
    ) -> TurnState:
        conversation = await self._conversation(turn.chat_id)
        # Images go to the model for this turn only; history keeps a text note, so a photo is
        # not sent (and paid for) again on every later turn.
        asked = [self._clean(content) for content in asked]
        stored = [{"role": "user", "content": history.text_only(c)} for c in asked]
        # Stored with its turn before anything else happens: a crash from here on loses
        # nothing the owner said, and the restart knows a reply was owed.
        await self.store.begin_turn(
            turn.id, turn.chat_id, turn.origin, conversation.id, *stored, received=turn.received
        )
        conversation.messages.extend(stored)
        # Tools still being listed (docs/reference/mcp.md, Lifecycle).
        if self.tools_ready is not None:
            await self.tools_ready()
        tally = Tally()
        # Keeps the newest (the owner's) message whole.
        limit = self.config.agent.history_tokens
        await compact(conversation, limit, self.llm, self.store, tally, self.registry)
        shown = history.show_asked(conversation.messages, stored, asked)
        # A guest's chat is offered only the guest's tools: decided once every tool is listed.
        guest = offer.guest_tools(self.config, self.registry, turn.chat_id)
        allowed = offer.narrowed(turn.caller.allowed_tools, guest)
        loaded = conversation.loaded_tools()
        persona = await self.personas.prompt_for(turn.chat_id) if self.personas else ""
        system = offer.system_prompt(
            self.config, self.registry, self.memory, self.catalog.text, persona, allowed, guest
        )
        reading = reading_of(conversation, self.registry, turn)
        caller = dataclasses.replace(
            turn.caller, turn_id=turn.id, reading=reading, allowed_tools=allowed
        )
        ctx = dataclasses.replace(self.context.for_caller(caller), spend=tally.add)
        schemas = offer.schemas(self.config, self.registry, turn.chat_id, loaded, allowed)
        state = TurnState(
            turn, conversation, system, ctx, stream, allowed, shown, loaded, schemas, tally
        )
        state.clock = {"role": "user", "content": now_note(self.config.zone)}
        return state

    async def _ask(
        self, state: TurnState, dispatch: Dispatch | None = None, **options: Any
    ) -> LLMResponse:
        if state.stream is not None:
            if state.tally.calls:
                await state.stream.restart()
            options["on_text"] = state.stream.text
            if dispatch is not None:
                options["on_tool_call"] = dispatch.start
        conversation = state.conversation
        try:
            response = await self.llm.complete(state.request(), state.schemas, **options)
        except LLMError as exc:
            if exc.status != 400 or not history.has_images(conversation.messages):
                raise
            # Most likely a model without vision: say so instead of failing the turn.
            conversation.messages = history.without_images(conversation.messages)
            response = await self.llm.complete(state.request(), state.schemas, **options)
        state.tally.add(response)
        return response

    async def _run_tools(self, state: TurnState, response: LLMResponse, dispatch: Dispatch) -> None:
        results = await dispatch.results(response.tool_calls)
        for call, result in zip(response.tool_calls, results, strict=True):
            state.artifacts.extend(result.artifacts)
            if result.prunable:
                state.mistaken.add(call.id)
            if result.loaded:
                state.loaded |= result.loaded
                chat = state.turn.chat_id
                state.schemas = offer.schemas(
                    self.config, self.registry, chat, state.loaded, state.allowed
                )
        answers = [tool_message(c.id, r) for c, r in zip(response.tool_calls, results, strict=True)]
        await self._remember(state.conversation, *answers)

    async def _finish(
        self, state: TurnState, text: str, answer: dict[str, Any] | None = None
    ) -> Reply:
        """The turn's last writes in one transaction: the model's answer (when it gave one),
        the usage, and the reply kept for delivery."""
        conversation, turn = state.conversation, state.turn
        last = [answer] if answer is not None else []
        conversation.messages.extend(last)
        for position, stored in state.asked.items():
            conversation.messages[position] = stored
        if state.mistaken:
            conversation.messages = history.prune(conversation.messages, state.mistaken)
            await self.store.replace_messages(conversation.id, conversation.messages, fresh=last)
            last = []  # the rewrite stored (and archived) it
        usage = state.usage(self.llm.model, text)
        reply = Reply(self.redact(text), state.artifacts, usage, turn.id, state.sources())
        await self.store.finish_turn(
            turn.id,
            reply.text,
            delivered=not turn.awaits_delivery,
            chat_id=turn.chat_id,
            conversation_id=conversation.id,
            messages=last,
            usage=usage,
        )
        return reply

    def _said(self, message: dict[str, Any]) -> dict[str, Any]:
        """What the model said, as history keeps it: a secret it wrote (in a call's arguments,
        in its answer) is used by the call or redacted in the reply, never kept to go back to
        the model. (Tool results come redacted from the executor.)"""
        return cast(dict[str, Any], self.redact.value(message))

    def _clean(self, content: Content) -> Content:
        return self.redact(content) if isinstance(content, str) else self.redact.value(content)


def tool_message(call_id: str, result: ToolResult) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": result.output}
