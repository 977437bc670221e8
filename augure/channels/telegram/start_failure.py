"""Why the Telegram bot could not start, in one line that names where to fix it."""

from __future__ import annotations

from telegram.error import InvalidToken, NetworkError

from augure.config.settings import Config, source_of


def start_failure(exc: Exception, config: Config) -> str:
    """One line without the token: python-telegram-bot's own InvalidToken text quotes it."""
    from augure.host.logs import BOT_TOKEN_IN_URL
    from augure.host.secrets import Redactor

    # Named where the owner set it (file and key, .env or variable), as `augure doctor` does.
    token_from = source_of(config, "telegram", "token")
    if isinstance(exc, InvalidToken):
        return f"Telegram rejected the bot token (401): fix {token_from}"
    # Left at its default, the address is named by where it can be set.
    url_from = source_of(config, "telegram", "api_url").removeprefix("not set: set ")
    if isinstance(exc, NetworkError):
        where = config.telegram.api_url.rstrip("/")
        through = " and the proxy ([telegram] proxy)" if config.telegram.proxy else ""
        return f"cannot reach the Bot API at {where}; check {url_from}{through} and the network"
    detail = BOT_TOKEN_IN_URL.sub(r"\1<token>", Redactor.from_config(config)(str(exc)))
    return f"cannot start the Telegram bot ({detail}); check {token_from} and {url_from}"
