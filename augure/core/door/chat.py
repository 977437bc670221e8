"""The chat desk: what a chat channel needs for each message, from taking it in to delivering
its answer (docs/architecture.md, "The door"). Only a running core has one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from augure.agent.turn import Later, Reply, TurnStream
from augure.common.content import Content
from augure.core.app import Core
from augure.core.speaking import speak
from augure.store.audit import new_id
from augure.store.inbox import Inbox, UpdateKey


class Deliveries(Protocol):
    """What a channel took, so a resend is skipped, and what it holds still, kept until
    taken (Telegram's updates: docs/reference/durability.md). The store's inbox, handed over
    once."""

    async def taken_updates(self) -> set[UpdateKey]: ...

    async def record_update(self, delivery: UpdateKey) -> None: ...

    async def park(self, held: list[tuple[UpdateKey, str]]) -> None: ...

    async def parked(self) -> list[str]: ...


class ChatDesk:
    """The verbs that decide something are methods; the others are the lower service's own
    methods, handed over once (nothing forwards a call it does not change)."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self._inbox = Inbox(core.store.db)
        self.deliveries: Deliveries = self._inbox
        # Messages a previous run took in and did not answer, in arrival order.
        self.waiting = self._inbox.waiting
        # Messages whose turn failed before it was stored; the owner was told instead.
        self.dismiss = self._inbox.dismiss
        self.new_turn_id = new_id
        # A streamed preview is on screen: recorded, so a restart finishes it in place.
        self.preview_shown = core.store.turn_preview
        self.delivered = core.agent.delivered  # the reply of a turn given `turn_id` is sent
        self.new_conversation = core.agent.new_conversation
        self.transcribe = core.models.transcribe
        self.warm_up = core.llm.warm_up
        personas = core.agent.personas
        assert personas is not None, "the core always builds the personas"
        self.personas = personas.names
        self.persona = personas.active
        self.set_persona = personas.choose

    async def converse(
        self,
        chat_id: str,
        content: Content,
        *,
        stream: TurnStream | None = None,
        turn_id: str | None = None,
        follow_ups: Sequence[Content] = (),
        received: Sequence[int] = (),
        later: Later | None = None,
    ) -> Reply:
        """`follow_ups`: messages that came after `content`, answered in the same turn.
        `received`: their ids from `receive`, out of the inbox once the turn is stored.
        `later`: what arrives while the turn runs, taken into it before a further call."""
        return await self._core.agent.handle(
            chat_id,
            content,
            stream=stream,
            turn_id=turn_id,
            follow_ups=follow_ups,
            received=received,
            later=later,
        )

    async def receive(
        self,
        chat_id: str,
        content: Content,
        album: str | None = None,
        *,
        spoken: bool = False,
        delivery: UpdateKey | None = None,
    ) -> int:
        """A message taken in, stored before it waits to be answered (docs/reference/durability.md):
        its id goes to `converse` with it. Secrets are masked as in the history. `delivery`:
        the channel's id and digest of what brought it, recorded as taken with it."""
        redact = self._core.redact
        clean = redact(content) if isinstance(content, str) else redact.value(content)
        return await self._inbox.receive(chat_id, clean, album, spoken=spoken, delivery=delivery)

    async def speak(self, chat_id: str, markdown: str) -> list[bytes] | None:
        """The answer as voice notes (docs/voice.md); None when it could not be spoken."""
        core = self._core
        return await speak(core.llm, core.budget, core.config.voice, markdown)
