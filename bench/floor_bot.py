"""The floor for a turn: a bare python-telegram-bot + openai SDK bot, no agent, no storage.

It answers each text message with one model call (the message alone, no history, no tools)
and sends the answer back: what any Telegram front to a model must do at least.
`bench.latency` runs it behind the same fakes as `augure run`, from the same environment
(TELEGRAM_BOT_TOKEN, AUGURE_TELEGRAM_API_URL, OPENAI_BASE_URL, OPENAI_API_KEY, AUGURE_MODEL),
so the ratio of the two is what Augure adds.
"""

from __future__ import annotations

import asyncio
import os

from openai import AsyncOpenAI
from telegram import Update
from telegram.ext import ContextTypes

from bench.echo_bot import serve

model = AsyncOpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment


async def answer(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    assert message is not None and message.text is not None
    response = await model.chat.completions.create(
        model=os.environ["AUGURE_MODEL"], messages=[{"role": "user", "content": message.text}]
    )
    await message.reply_text(response.choices[0].message.content or "")


if __name__ == "__main__":
    asyncio.run(serve(answer))
