"""Checks of the two services the bot cannot work without, each failure told apart.

Used by `augure doctor` and `augure init`. Every result is one line saying what is wrong
and which key or variable to fix; none contains the token or the key.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

TIMEOUT = 10.0
OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Probe:
    ok: bool
    detail: str


def _host(url: str) -> str:
    return urlsplit(url).hostname or url


def _network_problem(exc: BaseException, url: str) -> str:
    """DNS failure or refused/unreachable connection, from the exception's causes."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return f"host {_host(url)} does not resolve"
        if isinstance(seen, ConnectionRefusedError):
            return f"{_host(url)} refuses connections"
        if isinstance(seen, TimeoutError):
            return f"{_host(url)} did not answer within {TIMEOUT:g} s"
        seen = seen.__cause__ or seen.__context__
    return f"cannot connect to {_host(url)} ({type(exc).__name__})"


async def telegram(token: str, api_url: str, *, token_from: str, url_from: str) -> Probe:
    """`getMe`: a rejected token and an unreachable Bot API host are told apart."""
    from telegram import Bot
    from telegram.error import InvalidToken, NetworkError, TelegramError

    root = api_url.rstrip("/")
    try:
        bot = Bot(token, base_url=f"{root}/bot", base_file_url=f"{root}/file/bot")
    except InvalidToken:
        return Probe(False, f"the bot token is empty or malformed: fix {token_from}")
    try:
        me = await asyncio.wait_for(bot.get_me(), TIMEOUT)
    except InvalidToken:
        return Probe(False, f"Telegram rejected the bot token (401): fix {token_from}")
    except (NetworkError, TimeoutError) as exc:
        problem = _network_problem(exc, root)
        return Probe(False, f"{problem}: check {url_from}")
    except TelegramError as exc:
        return Probe(False, f"getMe failed ({type(exc).__name__}): check {token_from}")
    finally:
        await bot.shutdown()
    return Probe(True, f"getMe: @{me.username}")


async def llm(
    base_url: str | None,
    api_key: str,
    model: str,
    *,
    key_from: str,
    url_from: str,
    model_from: str,
) -> Probe:
    """One 1-token completion: rejected key, unknown model and unreachable host told apart."""
    import openai

    url = base_url or OPENAI_URL
    client = openai.AsyncOpenAI(base_url=url, api_key=api_key, max_retries=0, timeout=TIMEOUT)
    try:
        await client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "Say OK."}], max_tokens=1
        )
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return Probe(False, f"{url} rejected the API key ({exc.status_code}): fix {key_from}")
    except openai.NotFoundError as exc:
        if exc.code == "model_not_found" or "model" in exc.message.lower():
            return Probe(False, f"{url} does not know the model {model!r}: fix {model_from}")
        return Probe(False, f"{url} has no chat completions endpoint (404): fix {url_from}")
    except openai.APITimeoutError:
        return Probe(False, f"{_host(url)} did not answer within {TIMEOUT:g} s: check {url_from}")
    except openai.APIConnectionError as exc:
        return Probe(False, f"{_network_problem(exc, url)}: check {url_from}")
    except openai.BadRequestError:
        # The key and model were accepted; only the 1-token test request was not to its taste.
        return Probe(True, f"{url} answers with model {model}")
    except openai.APIStatusError as exc:
        return Probe(False, f"{url} answered {exc.status_code}: check {url_from}")
    finally:
        await client.close()
    return Probe(True, f"{url} answers with model {model}")
