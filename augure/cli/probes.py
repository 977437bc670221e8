"""Checks of the two services the bot cannot work without, each failure told apart.

Used by `augure doctor` and `augure init`. Every result is one line saying what is wrong
and which key or variable to fix; none contains the token or the key.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from augure.llm.faults import OPENAI_URL, Fault, classify, fault_line

TIMEOUT = 10.0


@dataclass(frozen=True)
class Probe:
    ok: bool
    detail: str
    # Why a model endpoint's check failed, where that is known: which answer to change.
    fault: Fault | None = None


def _host(url: str) -> str:
    return urlsplit(url).hostname or url


def _network_problem(exc: BaseException, url: str) -> str | None:
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
    return None


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().split("\n", 1)[0][:160]


def _unreachable(exc: BaseException, url: str) -> str:
    """A failed connection in words: the library's own class names mean nothing to the owner,
    so the deepest cause's message (a TLS or proxy refusal) stands in for an unknown one."""
    known = _network_problem(exc, url)
    if known is not None:
        return known
    root = exc
    while (below := root.__cause__ or root.__context__) is not None:
        root = below
    detail = _first_line(root)
    return f"cannot connect to {_host(url)}" + (f" ({detail})" if detail else "")


async def telegram(
    token: str, api_url: str, *, token_from: str, url_from: str, proxy: str | None = None
) -> Probe:
    """`getMe`: a rejected token, a refusal, an error page and an unreachable Bot API host
    are told apart. Through `proxy` when the bot uses one, as the bot itself would."""
    from telegram import Bot
    from telegram.error import BadRequest, InvalidToken, NetworkError, TelegramError
    from telegram.request import HTTPXRequest

    root = api_url.rstrip("/")
    request = HTTPXRequest(proxy=proxy) if proxy else None
    try:
        bot = Bot(token, base_url=f"{root}/bot", base_file_url=f"{root}/file/bot", request=request)
    except InvalidToken:
        return Probe(False, f"the bot token is empty or malformed: fix {token_from}")
    api = f"the Bot API at {_host(root)}"
    try:
        me = await asyncio.wait_for(bot.get_me(), TIMEOUT)
    except InvalidToken:
        return Probe(False, f"Telegram rejected the bot token (401): fix {token_from}")
    except BadRequest as exc:  # a NetworkError to python-telegram-bot, yet an answer
        return Probe(False, f"{api} refused getMe ({exc.message}): check {token_from}")
    except (NetworkError, TimeoutError) as exc:
        problem = _network_problem(exc, root)
        if problem is None and isinstance(exc, NetworkError) and exc.__cause__ is None:
            # Raised on an HTTP answer (a proxy's 502), not on a broken connection.
            problem = f"{api} answered with an error ({exc.message})"
        return Probe(False, f"{problem or _unreachable(exc, root)}: check {url_from}")
    except TelegramError as exc:
        return Probe(False, f"{api} refused getMe ({exc.message}): check {token_from}")
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
    except openai.BadRequestError:
        # The key and model were accepted; only the 1-token test request was not to its taste.
        return Probe(True, f"{url} answers with model {model}")
    except openai.APIStatusError as exc:
        fault = classify(exc.status_code, exc.code, exc.message)
        if fault is None:
            return Probe(False, f"{url} answered {exc.status_code}: check {url_from}")
        sources = {"key_from": key_from, "url_from": url_from, "model_from": model_from}
        return Probe(False, fault_line(fault, exc.status_code, url, model, **sources), fault)
    except openai.APITimeoutError:
        problem = f"{_host(url)} did not answer within {TIMEOUT:g} s: check {url_from}"
        return Probe(False, problem, Fault.TIMEOUT)
    except openai.APIConnectionError as exc:
        return Probe(False, f"{_unreachable(exc, url)}: check {url_from}", Fault.UNREACHABLE)
    finally:
        await client.close()
    return Probe(True, f"{url} answers with model {model}")
