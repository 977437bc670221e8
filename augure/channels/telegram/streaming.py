"""A reply that grows in one message while the model writes it, then is finalised in place."""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial

from augure.channels.telegram.delivery import Delivery
from augure.channels.telegram.render import Chunk, utf16_len
from augure.common.ports import NOT_KNOWN, Sources

log = logging.getLogger(__name__)

EDIT_INTERVAL = 1.0  # seconds between edits of one preview: Telegram's flood limits
PREVIEW_LIMIT = 4000  # UTF-16 units; the preview is plain text, so a little room is kept


def preview_text(text: str) -> str:
    if utf16_len(text) <= PREVIEW_LIMIT:
        return text
    cut = text[:PREVIEW_LIMIT]
    while utf16_len(cut) > PREVIEW_LIMIT - 1:
        cut = cut[: -max(1, (utf16_len(cut) - PREVIEW_LIMIT) // 2 + 1)]
    return cut + "…"


def shows_as(chunk: Chunk, shown: str) -> bool:
    """Whether a formatted part would look exactly like the plain preview `shown`.

    Telegram refuses an edit to the same text and entities ("message is not modified");
    markup-free HTML has no entities, and Telegram trims the text either way.
    """
    return "<" not in chunk.html and html.unescape(chunk.html).strip() == shown


class StreamingReply:
    """Implements the agent's TurnStream for one Telegram chat.

    The first preview waits EDIT_INTERVAL from the first words (not from the message's
    arrival: a turn may queue behind another, or the model think before writing), so a quick
    answer is one formatted message and never a preview plus an edit. The preview is plain
    text (half-written Markdown does not parse); `finish` replaces it with the formatted
    first part and sends the other parts.
    """

    def __init__(
        self,
        delivery: Delivery,
        chat_id: int,
        on_shown: Callable[[int, str], Awaitable[None]] | None = None,
        message_id: int | None = None,
    ) -> None:
        self.delivery = delivery
        self.chat_id = chat_id
        # Told each preview shown, so a restart can finalise a preview cut off mid-answer.
        self.on_shown = on_shown
        self.buffer = ""
        self.message_id = message_id
        self.shown = ""  # what the preview message shows, trimmed as Telegram trims it
        self._changed = asyncio.Event()
        self._closing = False
        self._next_show = 0.0
        self._due: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None

    async def text(self, delta: str) -> None:
        self.buffer += delta
        self._changed.set()
        if self._due is None:
            # A timer until the first preview is due: most answers are finished before it,
            # and then no task was ever created, run or awaited for their previews.
            loop = asyncio.get_running_loop()
            self._due = loop.call_later(EDIT_INTERVAL, self._start_showing)

    def _start_showing(self) -> None:
        if not self._closing:
            self._task = asyncio.get_running_loop().create_task(self._show_loop())

    async def restart(self) -> None:
        # A tool round follows: the next answer replaces what was shown.
        self.buffer = ""

    async def _show_loop(self) -> None:
        while not self._closing:
            await self._changed.wait()
            self._changed.clear()
            wait = self._next_show - time.monotonic()
            if wait > 0:
                # Woken early by finish(): the loop then ends without another request.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wait_closing(), wait)
            if self._closing:
                return
            await self._show(preview_text(self.buffer))
            self._next_show = time.monotonic() + EDIT_INTERVAL

    async def _wait_closing(self) -> None:
        while not self._closing:
            await self._changed.wait()
            self._changed.clear()

    async def _show(self, text: str) -> None:
        text = text.strip()
        if not text or text == self.shown:
            return
        bot = self.delivery.bot
        try:
            if self.message_id is None:
                message = await self.delivery.call(
                    self.chat_id, partial(bot.send_message, self.chat_id, text)
                )
                self.message_id = message.message_id
            else:
                await self.delivery.call(
                    self.chat_id,
                    partial(
                        bot.edit_message_text,
                        text,
                        chat_id=self.chat_id,
                        message_id=self.message_id,
                    ),
                )
            self.shown = text
            if self.on_shown is not None:
                await self.on_shown(self.message_id, text)
        except Exception as exc:  # a missed preview is harmless; the final answer is not
            log.warning("streaming preview failed: %s", exc)

    async def finish(self, markdown: str, sources: Sources = NOT_KNOWN) -> None:
        """Finalise: the preview becomes part one, formatted; the other parts follow, shown for
        what the answer drew on."""
        self._closing = True
        self._changed.set()
        if self._due is not None:
            self._due.cancel()
        if self._task is not None:
            # Never cancelled mid-request: a cancelled send could leave a message we do not
            # know about, and a second copy of the answer would follow.
            await self._task
        chunks = self.delivery.showing.chunks(markdown, sources)
        previews = self.delivery.showing.previews(sources)
        if self.message_id is None:
            for chunk in chunks:
                await self.delivery.send_chunk(self.chat_id, chunk, previews)
            return
        if not chunks:
            return
        if not shows_as(chunks[0], self.shown):
            await self.delivery.edit_chunk(self.chat_id, self.message_id, chunks[0], previews)
        for chunk in chunks[1:]:
            await self.delivery.send_chunk(self.chat_id, chunk, previews)
