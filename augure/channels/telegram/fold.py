"""Folded follow-ups and albums (docs/telegram.md, "Follow-ups and albums").

People write in bursts: a question, then a correction, then a photo. Each message of a chat
joins the chat's pending batch in arrival order; one drain per chat hands the batch to a
single turn once the chat is quiet: no message of it still being read (a download, a
transcription), none newer than `fold_seconds` (0 by default: a lone message is answered at
once), and no album part newer than ALBUM_SECONDS. Whatever arrives while that turn runs is
taken into it before its next model call when it is still working through tools (`later`),
or else becomes the next batch, so a burst costs one further model call, not one per message.

Telegram counts a message delivered once the bot has read it, so each is stored in the core's
inbox before it waits here (`take`); the agent stores the whole batch with its turn, and takes
it out of the inbox, in one transaction before the model sees any of it. A start hands back
what a crash left waiting (`hand_back`), so no message is lost or answered twice
(docs/reference/durability.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from augure.common.content import Content
from augure.core.door.chat import ChatDesk

log = logging.getLogger(__name__)

# Telegram sends an album's parts as separate updates within a few milliseconds; this waits
# out a slow one even with `fold_seconds = 0`, so an album is always one message.
ALBUM_SECONDS = 0.5
# A chat that keeps typing is still answered: the window never holds a batch longer.
LONGEST_WAIT_SECONDS = 10.0

# The chat, the batch's messages in order, whether one of them was a voice note (a voice
# note may be answered by voice: docs/voice.md), and their ids in the inbox.
Answer = Callable[[int, list[Content], bool, list[int]], Awaitable[None]]
Failed = Callable[[int, BaseException], Awaitable[None]]


@dataclass
class _Part:
    content: Content
    album: str | None
    spoken: bool = False
    received: int | None = None  # its id in the inbox


@dataclass
class _Chat:
    parts: list[_Part] = field(default_factory=list)
    reading: int = 0  # messages of this chat taken in but not yet read
    last_arrival: float = 0.0
    first_arrival: float = 0.0
    album_arrival: float = 0.0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    drain: asyncio.Task[None] | None = None
    answering: list[int] = field(default_factory=list)  # inbox ids of the running turn


class Folder:
    """Per chat: the messages waiting to be answered, and the one task answering them."""

    def __init__(self, answer: Answer, failed: Failed, fold_seconds: float) -> None:
        self._answer = answer
        self._failed = failed
        self.fold_seconds = fold_seconds
        self._chats: dict[int, _Chat] = {}
        self._closing = False
        self.inbox: ChatDesk | None = None  # where messages are kept while they wait

    async def take(
        self,
        chat_id: int,
        content: Content,
        album: str | None = None,
        *,
        spoken: bool = False,
        delivery: tuple[int, str] | None = None,
    ) -> None:
        """A message read: stored (with the update that brought it, as taken), then added to
        its chat's batch."""
        assert self.inbox is not None, "messages are taken in only once the core is open"
        received = await self.inbox.receive(
            str(chat_id), content, album, spoken=spoken, delivery=delivery
        )
        self.add(chat_id, content, album, spoken=spoken, received=received)

    async def hand_back(self) -> int:
        """What a previous run took in and never answered, back in each chat's batch in
        arrival order. It has waited already: answered without a further window."""
        assert self.inbox is not None
        waiting = await self.inbox.waiting()
        for message in waiting:
            chat_id, album = int(message.chat_id), message.album
            self.add(chat_id, message.content, album, spoken=message.spoken, received=message.id)
            self._chats[chat_id].last_arrival = float("-inf")
            self._chats[chat_id].album_arrival = float("-inf")
        return len(waiting)

    @contextlib.contextmanager
    def reading(self, chat_id: int) -> Iterator[None]:
        """Held from a message's arrival until it is added (or dropped): the batch waits for
        it, so a slow download never lets a later message be answered first."""
        chat = self._chats.setdefault(chat_id, _Chat())
        chat.reading += 1
        try:
            yield
        finally:
            chat.reading -= 1
            chat.changed.set()
            if not chat.reading and not chat.parts and chat.drain is None:
                self._chats.pop(chat_id, None)  # dropped (a voice note not heard)

    def add(
        self,
        chat_id: int,
        content: Content,
        album: str | None = None,
        *,
        spoken: bool = False,
        received: int | None = None,
    ) -> None:
        chat = self._chats.setdefault(chat_id, _Chat())
        now = time.monotonic()
        if not chat.parts:
            chat.first_arrival = now
        chat.parts.append(_Part(content, album, spoken, received))
        chat.last_arrival = now
        if album is not None:
            chat.album_arrival = now
        chat.changed.set()
        if chat.drain is None:
            chat.drain = asyncio.create_task(self._drain(chat_id, chat))

    def later(self, chat_id: int) -> tuple[list[Content], list[int]] | None:
        """For the chat's running turn, before its next model call: what arrived since it
        began, if the chat is quiet (nothing still being read, no album part or window
        pending), with its inbox ids. A voice note is left to a turn of its own, which may
        answer it by voice."""
        chat = self._chats.get(chat_id)
        if chat is None or not chat.parts or chat.reading or self._wait_left(chat) > 0:
            return None
        if any(part.spoken for part in chat.parts):
            return None
        batch, chat.parts = chat.parts, []
        received = [part.received for part in batch if part.received is not None]
        chat.answering.extend(received)  # a failed turn dismisses them with its batch
        return merge_albums(batch), received

    async def close(self) -> None:
        """Waits for the batches being answered; the caller bounds the wait. A batch still
        waiting (a window, an album's last part) is in the inbox: left to the next start."""
        self._closing = True
        for chat in self._chats.values():
            chat.changed.set()
        drains = [chat.drain for chat in self._chats.values() if chat.drain is not None]
        try:
            await asyncio.gather(*drains, return_exceptions=True)
        finally:
            for drain in drains:
                drain.cancel()

    async def _drain(self, chat_id: int, chat: _Chat) -> None:
        try:
            while chat.parts:
                if not await self._quiet(chat):
                    return  # stopping: it stays in the inbox for the next start
                batch, chat.parts = chat.parts, []
                received = [part.received for part in batch if part.received is not None]
                chat.answering = received
                try:
                    spoken = any(part.spoken for part in batch)
                    await self._answer(chat_id, merge_albums(batch), spoken, received)
                except Exception as exc:
                    await self._failed(chat_id, exc)
                    await self._dismiss(received)
        finally:
            chat.drain = None
            if not chat.parts and not chat.reading:
                self._chats.pop(chat_id, None)

    async def _dismiss(self, received: list[int]) -> None:
        """The owner was told the batch failed: that is its answer, so a start must not
        answer it again. (A batch its turn had stored is out of the inbox already.)"""
        if self.inbox is None or not received:
            return
        try:
            await self.inbox.dismiss(received)
        except Exception:  # still waiting: the next start answers it instead
            log.exception("could not take a failed batch out of the inbox")

    async def _quiet(self, chat: _Chat) -> bool:
        """True once the batch may go; False if a stop comes while it waits."""
        while True:
            chat.changed.clear()
            wait = self._wait_left(chat) if not chat.reading else None
            if wait is not None and wait <= 0:
                return True
            if self._closing:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(chat.changed.wait(), wait)

    def _wait_left(self, chat: _Chat) -> float:
        now = time.monotonic()
        window = chat.last_arrival + self.fold_seconds
        window = min(window, chat.first_arrival + LONGEST_WAIT_SECONDS)
        if chat.parts and chat.parts[-1].album is not None:
            window = max(window, chat.album_arrival + ALBUM_SECONDS)
        return window - now


def merge_albums(parts: list[_Part]) -> list[Content]:
    """One message per album (its parts in order), every other message as it came."""
    merged: list[Content] = []
    album_of_last: str | None = None
    for part in parts:
        if part.album is not None and part.album == album_of_last:
            merged[-1] = _joined(merged[-1], part.content)
        else:
            merged.append(part.content)
        album_of_last = part.album
    return merged


def _joined(first: Content, second: Content) -> Content:
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return [*_as_parts(first), *_as_parts(second)]


def _as_parts(content: Content) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
