"""The end-to-end harness (the real app against the fake Telegram and OpenAI servers)."""

from tests.e2e.conftest import bot, bot_env, extra_tools, llm, telegram

__all__ = ["bot", "bot_env", "extra_tools", "llm", "telegram"]
