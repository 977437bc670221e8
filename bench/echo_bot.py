"""The harness floor: a bare python-telegram-bot echo bot, no agent, no model, no storage.

`bench.run` times it behind the same fake as `augure run`, so the difference between the two
is what Augure itself adds to a turn.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Coroutine
from typing import Any

from telegram import Update
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None and update.effective_chat is not None
    await context.bot.send_message(update.effective_chat.id, "ok")


Handler = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]


async def serve(handler: Handler) -> None:
    """Long polling with `handler` on every text message, until SIGTERM (the floors share it)."""
    root = os.environ["AUGURE_TELEGRAM_API_URL"]
    application = (
        ApplicationBuilder()
        .token(os.environ["TELEGRAM_BOT_TOKEN"])
        .base_url(f"{root}/bot")
        .concurrent_updates(True)
        .build()
    )
    application.add_handler(MessageHandler(filters.TEXT, handler))
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with application:
        await application.start()
        assert application.updater is not None
        await application.updater.start_polling(timeout=30)
        await stop.wait()
        await application.updater.stop()
        await application.stop()


if __name__ == "__main__":
    asyncio.run(serve(echo))
