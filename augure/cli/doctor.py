"""`augure doctor`: one line per check, so the owner sees at once what to fix."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from augure.config.settings import Config, source_of
from augure.llm.spend import priced_models

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
    yield _home(config)
    yield await _llm(config)
    for check in price_checks(config):
        yield check
    yield await _telegram(config)
    # A tool whose launch failed is not ready, however complete its configuration.
    probed = {"browser": await _browser(config), "sandbox_exec": await _sandbox(config)}
    yield probed["browser"]
    yield probed["sandbox_exec"]
    if config.tools.section("calendar"):
        probed["calendar"] = await _calendar(config)
        yield probed["calendar"]
    if config.sandbox.backend == "bwrap":
        yield _seccomp()
    if config.voice.replies != "off":
        yield _voice(config)
    if not config.telegram.allowed_users:
        yield Check("allowlist", False, "AUGURE_ALLOWED_USERS is empty: nobody may chat", False)
    else:
        yield Check("allowlist", True, f"{len(config.telegram.allowed_users)} allowed user(s)")
    async for check in _mcp(config):
        yield check
    from augure.core.toolset import build_registry

    for tool in build_registry(config).list():
        missing = tool.config_check(config)
        launch = probed.get(tool.name)
        if missing is None and launch is not None and not launch.ok:
            missing = f"not ready: see the {launch.name} line above"
        yield Check(f"tool {tool.name}", missing is None, missing or "ready", required=False)


def price_checks(config: Config) -> list[Check]:
    """With a `[budget]` cap, each model a call may go to, and for one without a price the
    setting to add: it is not called while the cap is set
    (docs/reference/spend.md#prices-of-every-model)."""
    if not config.budget.capped:
        return []
    return [
        Check(
            f"price {model.model}",
            False,
            f"no price, so it is not called while [budget] has a cap: set {model.setting}",
            required=False,
        )
        if not model.prices.priced
        else Check(
            f"price {model.model}",
            True,
            f"${model.prices.input_price_per_million}/M in, "
            f"${model.prices.output_price_per_million}/M out",
        )
        for model in priced_models(config)
    ]


def _home(config: Config) -> Check:
    from augure.host.home import HomeError, check_usable

    try:
        check_usable(config.home)
    except HomeError as exc:
        return Check("home", False, str(exc))
    return Check("home", True, f"{config.home} is writable")


async def _mcp(config: Config) -> AsyncIterator[Check]:
    """Each MCP server started once, as the bot would: its state and tool count."""
    if not config.mcp.servers:
        return
    from augure.mcp.survey import survey

    for server in await survey(config, CHECK_TIMEOUT * 3):
        state, error = server["state"], server["error"]
        detail = f"{state}, {len(server['tools'])} tool(s)" if state == "ready" else state
        detail += f" ({error})" if error else ""
        ok = state in ("ready", "disabled")
        yield Check(f"mcp {server['name']}", ok, detail, required=False)


async def _llm(config: Config) -> Check:
    from augure.cli import probes

    # Without a key the bot sends "-", which local servers (Ollama, vLLM) accept.
    key = config.llm.api_key.get_secret_value() if config.llm.api_key else "-"
    probe = await probes.llm(
        config.llm.base_url,
        key,
        config.llm.model,
        key_from=source_of(config, "llm", "api_key"),
        url_from=source_of(config, "llm", "base_url"),
        model_from=source_of(config, "llm", "model"),
    )
    return Check("llm", probe.ok, probe.detail)


async def _telegram(config: Config) -> Check:
    from augure.cli import probes

    token_from = source_of(config, "telegram", "token")
    if config.telegram.token is None:
        return Check("telegram", False, f"no bot token ({token_from})")
    probe = await probes.telegram(
        config.telegram.token.get_secret_value(),
        config.telegram.api_url,
        token_from=token_from,
        url_from=source_of(config, "telegram", "api_url"),
        proxy=config.telegram.proxy,
    )
    return Check("telegram", probe.ok, probe.detail)


async def _sandbox(config: Config) -> Check:
    from augure.sandbox import probe

    try:
        ok, detail = await asyncio.wait_for(probe(config), CHECK_TIMEOUT)
    except Exception as exc:
        return Check("sandbox", False, _short(exc, config), required=False)
    return Check("sandbox", ok, detail, required=False)


def _seccomp() -> Check:
    """bwrap runs commands without the filter when libseccomp is missing, so the sandbox line
    alone would read "ok": this line says what is lost."""
    from augure.sandbox import libseccomp, seccomp

    try:
        seccomp.program()
    except seccomp.SeccompUnavailable as exc:
        lost = "the sandbox runs without its system call filter"
        return Check("seccomp", False, f"{exc}: {lost}", required=False)
    made = f"libseccomp {libseccomp.version()} builds the sandbox's system call filter"
    return Check("seccomp", True, made, required=False)


def _voice(config: Config) -> Check:
    """Spoken replies need opusenc only when the endpoint answers in WAV, not OGG/Opus."""
    from augure.llm.speech import converter

    replies = f"[voice] replies = {config.voice.replies}"
    found = converter()
    if found is None:
        lost = "speech an endpoint returns as WAV cannot be sent (apt install opus-tools)"
        return Check("voice", False, f"{replies}, but opusenc is missing: {lost}", False)
    return Check("voice", True, f"{replies}; {found} turns WAV speech into OGG/Opus", False)


async def _browser(config: Config) -> Check:
    from augure.tools.browser import probe

    try:
        found = await asyncio.wait_for(probe(config), CHECK_TIMEOUT * 3)
    except Exception as exc:
        return Check("browser", False, _short(exc, config), required=False)
    return Check("browser", True, found, required=False)


async def _calendar(config: Config) -> Check:
    """The CalDAV login, and the calendars it finds (docs/calendar.md)."""
    from augure.tools.calendar import calendar_settings
    from augure.tools.calendar.actions import probe

    try:
        found = await asyncio.wait_for(probe(calendar_settings(config)), CHECK_TIMEOUT * 3)
    except Exception as exc:
        return Check("calendar", False, _short(exc, config), required=False)
    return Check("calendar", True, found, required=False)


def _short(exc: BaseException, config: Config) -> str:
    from augure.host.secrets import Redactor

    # The message alone: an exception's class name tells the owner nothing to do.
    text = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    if not text:
        text = "did not finish in time" if isinstance(exc, TimeoutError) else "failed silently"
    return Redactor.from_config(config)(text)
