"""The chat desk: what a chat channel needs for each message, from taking it in to delivering
its answer (docs/architecture.md, "The door"). Only a running core has one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from augure.agent.personas import Personas
from augure.agent.turn import Content, Later, Reply, TurnStream
from augure.core.app import Core
from augure.core.speaking import speak
from augure.store.audit import new_id
from augure.store.inbox import Inbox, Waiting

Delivery = tuple[int, str]  # a channel's id of what brought a message, and its digest


class Deliveries(Protocol):
    """What a channel took, so a resend is skipped, and what it holds still, kept until
    taken (Telegram's updates: docs/durability.md). The store's inbox, handed over once."""

    async def taken_updates(self) -> set[Delivery]: ...

    async def record_update(self, delivery: Delivery) -> None: ...

    async def park(self, held: list[tuple[Delivery, str]]) -> None: ...

    async def parked(self) -> list[str]: ...


class ChatDesk:
    def __init__(self, core: Core) -> None:
        self._core = core
        self._inbox = Inbox(core.store.db)
        self.deliveries: Deliveries = self._inbox

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
        delivery: Delivery | None = None,
    ) -> int:
        """A message taken in, stored before it waits to be answered (docs/durability.md):
        its id goes to `converse` with it. Secrets are masked as in the history. `delivery`:
        the channel's id and digest of what brought it, recorded as taken with it."""
        redact = self._core.redact
        clean = redact(content) if isinstance(content, str) else redact.value(content)
        return await self._inbox.receive(chat_id, clean, album, spoken=spoken, delivery=delivery)

    async def waiting(self) -> list[Waiting]:
        """Messages a previous run took in and did not answer, in arrival order."""
        return await self._inbox.waiting()

    async def dismiss(self, received: Sequence[int]) -> None:
        """Messages whose turn failed before it was stored; the owner was told instead."""
        await self._inbox.dismiss(received)

    @staticmethod
    def new_turn_id() -> str:
        return new_id()

    async def preview_shown(self, turn_id: str, message_id: int, text: str) -> None:
        """A streamed preview is on screen: recorded, so a restart finishes it in place."""
        await self._core.store.turn_preview(turn_id, message_id, text)

    async def delivered(self, turn_id: str) -> None:
        await self._core.agent.delivered(turn_id)

    async def new_conversation(self, chat_id: str) -> None:
        await self._core.agent.new_conversation(chat_id)

    async def transcribe(self, audio: bytes, filename: str) -> str:
        return await self._core.models.transcribe(audio, filename)

    async def speak(self, chat_id: str, markdown: str) -> list[bytes] | None:
        """The answer as voice notes (docs/voice.md); None when it could not be spoken."""
        core = self._core
        return await speak(core.llm, core.budget, core.config.voice, markdown)

    async def warm_up(self) -> None:
        await self._core.llm.warm_up()

    def personas(self) -> list[str]:
        return self._personas.names()

    async def persona(self, chat_id: str) -> str | None:
        return await self._personas.active(chat_id)

    async def set_persona(self, chat_id: str, name: str | None) -> None:
        await self._personas.choose(chat_id, name)

    @property
    def _personas(self) -> Personas:
        personas = self._core.agent.personas
        assert personas is not None, "the core always builds the personas"
        return personas
