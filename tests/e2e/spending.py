"""What the spend tests share: the capped config, and asking the bot (the `bot_with_config`
fixture, in conftest, starts one on a config of the test's own)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tests.e2e.conftest import OWNER, Bot

Start = Callable[..., Awaitable[Bot]]

CAPPED = """\
[llm]
input_price_per_million = 1000.0
output_price_per_million = 1000.0
[budget]
daily_usd = 0.01
"""


def texts(bot: Bot) -> list[str]:
    return [m.get("text", "") for m in bot.telegram.messages(OWNER)]


def told(bot: Bot, fragment: str) -> int:
    return sum(fragment in message for message in texts(bot))


async def ask(bot: Bot, words: str, expected: str) -> None:
    before = told(bot, expected)
    bot.telegram.inject_message(OWNER, words)
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and told(bot, expected) > before, timeout=15
    )
