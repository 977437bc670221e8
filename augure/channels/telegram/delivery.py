"""Everything the bot sends to a chat passes here: in order, rate-limited, never twice."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import TypeVar

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, Message
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, RetryAfter

from augure.channels.telegram.render import Chunk
from augure.channels.telegram.showing import NO_PREVIEW, Showing
from augure.common.ports import NOT_KNOWN, Sources

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_RETRIES = 5
TYPING_REFRESH_SECONDS = 4.5  # Telegram shows "typing" for about 5 s per call
# An answer ready sooner needs no indicator: it would cost a Bot API call (and Telegram's
# rate limit counts it) for a status nobody sees before the answer replaces it.
TYPING_DELAY_SECONDS = 0.5


def _seconds(retry_after: int | dt.timedelta) -> float:
    return retry_after.total_seconds() if isinstance(retry_after, dt.timedelta) else retry_after


class Delivery:
    """`showing` decides how an answer goes out for what it drew on; everything else the bot
    sends goes without a link preview (the bot's defaults)."""

    def __init__(self, bot: Bot, showing: Showing | None = None) -> None:
        self.bot = bot
        self.showing = showing or Showing()
        self._locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._not_before: dict[int, float] = {}

    async def call(self, chat_id: int, send: Callable[[], Awaitable[T]]) -> T:
        """Run one Bot API call for a chat, honouring flood control.

        Only a 429 is retried: Telegram accepted nothing then. A timeout is not retried, since
        the message may have arrived and a second copy is worse than a logged error.
        """
        async with self._locks[chat_id]:
            for attempt in range(MAX_RETRIES + 1):
                wait = self._not_before.get(chat_id, 0.0) - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                try:
                    return await send()
                except RetryAfter as exc:
                    delay = _seconds(exc.retry_after)
                    log.warning("flood control in chat %s: waiting %.1f s", chat_id, delay)
                    self._not_before[chat_id] = time.monotonic() + delay
                    if attempt == MAX_RETRIES:
                        raise
            raise AssertionError("unreachable")

    async def send_markdown(
        self, chat_id: int, markdown: str, sources: Sources = NOT_KNOWN
    ) -> list[Message]:
        """Send a reply: rendered to HTML, split to fit, plain text if the markup is refused;
        shown for what it drew on (`sources`)."""
        previews = self.showing.previews(sources)
        chunks = self.showing.chunks(markdown, sources)
        return [await self.send_chunk(chat_id, chunk, previews) for chunk in chunks]

    async def send_chunk(
        self, chat_id: int, chunk: Chunk, previews: LinkPreviewOptions = NO_PREVIEW
    ) -> Message:
        send = partial(self.bot.send_message, chat_id, link_preview_options=previews)
        try:
            return await self.call(chat_id, partial(send, chunk.html, parse_mode="HTML"))
        except BadRequest as exc:
            if "parse" not in str(exc).lower():
                raise
            log.warning("Telegram refused the markup (%s); sending plain text", exc)
            return await self.call(chat_id, partial(send, chunk.plain))

    async def edit_chunk(
        self, chat_id: int, message_id: int, chunk: Chunk, previews: LinkPreviewOptions = NO_PREVIEW
    ) -> None:
        """Replace a message's text (a streaming preview) with a formatted part."""
        edit = partial(
            self.bot.edit_message_text,
            chat_id=chat_id,
            message_id=message_id,
            link_preview_options=previews,
        )
        try:
            try:
                await self.call(chat_id, partial(edit, chunk.html, parse_mode="HTML"))
            except BadRequest as exc:
                if "parse" not in str(exc).lower():
                    raise
                await self.call(chat_id, partial(edit, chunk.plain))
        except BadRequest as exc:
            if "not modified" not in str(exc).lower():  # already showing exactly this
                raise

    async def send_text(self, chat_id: int, text: str) -> Message:
        return await self.call(chat_id, partial(self.bot.send_message, chat_id, text))

    async def send_html(
        self, chat_id: int, html: str, buttons: list[list[InlineKeyboardButton]] | None = None
    ) -> Message:
        """Our own HTML (every outside value escaped by the caller), with a button row each."""
        send = partial(
            self.bot.send_message,
            chat_id,
            html,
            parse_mode=ParseMode.HTML,
            reply_markup=InlineKeyboardMarkup(buttons) if buttons else None,
        )
        return await self.call(chat_id, send)

    @contextlib.asynccontextmanager
    async def typing(
        self, chat_id: int, action: ChatAction = ChatAction.TYPING
    ) -> AsyncIterator[None]:
        """Show "typing…" (or another action, e.g. "recording a voice message") while the
        block runs, once it has run TYPING_DELAY_SECONDS."""

        async def keep_typing() -> None:
            while True:
                with contextlib.suppress(Exception):  # a lost indicator is harmless
                    await self.bot.send_chat_action(chat_id, action)
                await asyncio.sleep(TYPING_REFRESH_SECONDS)

        # A timer rather than a sleeping task: most turns end before it fires, and then no
        # task was ever created, run or cancelled for them.
        loop = asyncio.get_running_loop()
        task: asyncio.Task[None] | None = None

        def start() -> None:
            nonlocal task
            task = loop.create_task(keep_typing())

        timer = loop.call_later(TYPING_DELAY_SECONDS, start)
        try:
            yield
        finally:
            timer.cancel()
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
