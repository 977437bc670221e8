"""`augure doctor`: one line per check, so the owner sees at once what to fix."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from augure.config import Config

CHECK_TIMEOUT = 10.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True

    def line(self) -> str:
        status = "ok  " if self.ok else ("FAIL" if self.required else "warn")
        return f"{status}  {self.name}: {self.detail}"


async def run_checks(config: Config) -> AsyncIterator[Check]:
    yield Check("config", True, f"home {config.home}")
    yield await _llm(config)
    yield await _telegram(config)
    yield await _browser(config)
    yield await _sandbox(config)
    if not config.telegram.allowed_users:
        yield Check("allowlist", False, "AUGURE_ALLOWED_USERS is empty: nobody may chat", False)
    else:
        yield Check("allowlist", True, f"{len(config.telegram.allowed_users)} allowed user(s)")
    from augure.app import build_registry

    for tool in build_registry(config).list():
        missing = tool.config_check(config)
        yield Check(f"tool {tool.name}", missing is None, missing or "ready", required=False)


async def _llm(config: Config) -> Check:
    from augure.agent.llm import LLM

    llm = LLM(config.llm)
    where = config.llm.base_url or "OpenAI"
    try:
        models = await asyncio.wait_for(llm.list_models(), CHECK_TIMEOUT)
    except Exception as exc:
        detail = f"{where} unreachable ({_short(exc, config)}); check OPENAI_BASE_URL"
        return Check("llm", False, detail)
    finally:
        await llm.close()
    listed = "listed" if config.llm.model in models else "not listed by the endpoint"
    return Check("llm", True, f"{where} answers; model {config.llm.model} {listed}")


async def _telegram(config: Config) -> Check:
    if config.telegram.token is None:
        return Check("telegram", False, "TELEGRAM_BOT_TOKEN is not set")
    from telegram import Bot

    root = config.telegram.api_url.rstrip("/")
    bot = Bot(
        config.telegram.token.get_secret_value(),
        base_url=f"{root}/bot",
        base_file_url=f"{root}/file/bot",
    )
    try:
        me = await asyncio.wait_for(bot.get_me(), CHECK_TIMEOUT)
    except Exception as exc:
        return Check("telegram", False, f"getMe failed ({_short(exc, config)}); check the token")
    finally:
        await bot.shutdown()
    return Check("telegram", True, f"getMe: @{me.username}")


async def _sandbox(config: Config) -> Check:
    from augure.sandbox import probe

    try:
        ok, detail = await asyncio.wait_for(probe(config), CHECK_TIMEOUT)
    except Exception as exc:
        return Check("sandbox", False, _short(exc, config), required=False)
    return Check("sandbox", ok, detail, required=False)


async def _browser(config: Config) -> Check:
    from augure.tools.browser import probe

    try:
        found = await asyncio.wait_for(probe(config), CHECK_TIMEOUT * 3)
    except Exception as exc:
        return Check("browser", False, _short(exc, config), required=False)
    return Check("browser", True, found, required=False)


def _short(exc: BaseException, config: Config) -> str:
    from augure.secrets import Redactor

    text = str(exc).splitlines()[0] if str(exc) else ""
    line = f"{type(exc).__name__}: {text}"[:160] if text else type(exc).__name__
    return Redactor.from_config(config)(line)
