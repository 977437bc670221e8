"""`augure init`: a new home with a commented config, every answer checked before writing.

Secrets go to `$AUGURE_HOME/.env` (mode 600), not to `augure.toml`: the config file can then
be shared or backed up in the clear, and the same `.env` works as Docker Compose's env file.
"""

from __future__ import annotations

import argparse
import getpass
import os
import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from dotenv import dotenv_values

from augure.cli import probes
from augure.common.errors import UsageError
from augure.config.settings import ENV_FILE_NAME, default_home
from augure.config.template import render
from augure.host.home import private_home
from augure.llm.faults import Fault

DEFAULT_MODEL = "gpt-4o-mini"
TELEGRAM_API = "https://api.telegram.org"
PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.:/@+=,-]*")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    init = commands.add_parser(
        "init",
        help="set up AUGURE_HOME: config, bot token, owner, LLM (checked)",
        description="Create AUGURE_HOME with a commented augure.toml holding every section "
        "with its defaults. Asks for the bot token, your Telegram user id, the LLM endpoint, "
        "key and model (or takes them as flags), and checks each before writing. Secrets go "
        "to $AUGURE_HOME/.env (mode 600).",
    )
    init.add_argument("--token", help="the bot token from @BotFather (checked with getMe)")
    init.add_argument("--owner", help="your Telegram user id (a number), allowed to use the bot")
    init.add_argument("--base-url", help="OpenAI-compatible endpoint; empty = OpenAI")
    init.add_argument("--api-key", help="the endpoint's API key (empty for local servers)")
    init.add_argument("--model", help=f"model name (default {DEFAULT_MODEL})")
    init.add_argument("--calendar-url", help="optional: a CalDAV account's address")
    init.add_argument("--calendar-username", help="its login (asked when missing)")
    init.add_argument("--calendar-password", help="its password (asked, not echoed, when missing)")
    init.add_argument(
        "--non-interactive", action="store_true", help="never ask: take the flags, fail if missing"
    )
    init.add_argument("--force", action="store_true", help="replace an existing augure.toml")
    init.add_argument(
        "--skip-checks",
        action="store_true",
        help="set up offline: check the answers' form only, not Telegram or the endpoint",
    )


@dataclass
class Answers:
    token: str = ""
    owner: str = ""
    base_url: str = ""
    api_key: str = ""
    model: str = ""
    calendar_url: str = ""
    calendar_username: str = ""
    calendar_password: str = ""


class Prompter:
    """Asks on the terminal; secrets are not echoed when stdin is a terminal."""

    def __init__(self, stdin: TextIO, stderr: TextIO) -> None:
        self.stdin, self.stderr = stdin, stderr

    def ask(self, question: str, default: str = "", secret: bool = False) -> str:
        shown = f" [{default}]" if default and not secret else ""
        if secret and self.stdin.isatty():
            answer = getpass.getpass(f"{question}{shown}: ", stream=self.stderr)
        else:
            self.stderr.write(f"{question}{shown}: ")
            self.stderr.flush()
            line = self.stdin.readline()
            if not line:
                raise UsageError(f"no answer to {question!r} (end of input)")
            answer = line
        return answer.strip() or default


# At the terminal a failed check names the answer to give again in the question's words;
# with --non-interactive it names the flag.
TOKEN_QUESTION = "Telegram bot token (from @BotFather)"
OWNER_QUESTION = "Your Telegram user id (a number; @userinfobot tells you)"
URL_QUESTION = "LLM endpoint (empty = OpenAI)"
KEY_QUESTION = "LLM API key (empty for a local server)"
TRIES = 3


@dataclass(frozen=True)
class Named:
    """How a failed check names each answer."""

    token: str
    url: str
    key: str
    model: str


FLAGS = Named("--token", "--base-url", "--api-key", "--model")
TYPED = Named(
    "the token you pasted (copy it again from @BotFather)",
    "the endpoint you typed",
    "the API key you typed",
    "the model you typed",
)


async def init(args: argparse.Namespace) -> int:
    home = default_home()
    file = Path(args.config).expanduser() if args.config else home / "augure.toml"
    if file.exists() and not args.force:
        raise UsageError(f"{file} already exists; use --force to replace it")
    answers = Answers(
        args.token or "",
        args.owner or "",
        args.base_url or "",
        args.api_key or "",
        args.model or "",
        args.calendar_url or "",
        args.calendar_username or "",
        args.calendar_password or "",
    )
    checks = not args.skip_checks
    prompter = None if args.non_interactive else Prompter(sys.stdin, sys.stderr)
    if prompter is None:
        await _settle_flags(answers, checks)
    else:
        terminal = Terminal(prompter, checks)
        await terminal.settle(answers)
    await _settle_calendar(answers, checks, prompter)
    _write(home, file, answers)
    unchecked = " (not checked: run `augure doctor` once online)" if not checks else ""
    print(f"Wrote {file} and {home / ENV_FILE_NAME} (mode 600){unchecked}.")
    print("Start the bot: augure run")
    return 0


def _api_url() -> str:
    # The Bot API root is not asked (almost nobody runs their own); tests and self-hosted Bot
    # API servers set it in the environment, and init saves it for `augure run`.
    return os.environ.get("AUGURE_TELEGRAM_API_URL") or TELEGRAM_API


async def _settle_flags(answers: Answers, checks: bool) -> None:
    """--non-interactive: every answer from a flag; the first failed check ends it."""
    for flag, value in (("--token", answers.token), ("--owner", answers.owner)):
        if not value:
            raise UsageError(f"{flag} is required with --non-interactive")
    answers.model = answers.model or DEFAULT_MODEL
    if not answers.owner.strip().isdigit():
        raise UsageError(f"--owner must be your numeric Telegram user id, not {answers.owner!r}")
    if not checks:
        return
    for probe in (_telegram, _llm_probe):
        found = await probe(answers, FLAGS)
        if not found.ok:
            raise UsageError(found.detail)


async def _telegram(answers: Answers, named: Named) -> probes.Probe:
    return await probes.telegram(
        answers.token, _api_url(), token_from=named.token, url_from="AUGURE_TELEGRAM_API_URL"
    )


async def _llm_probe(answers: Answers, named: Named) -> probes.Probe:
    return await probes.llm(
        answers.base_url or None,
        answers.api_key or "-",
        answers.model,
        key_from=named.key,
        url_from=named.url,
        model_from=named.model,
    )


async def _settle_calendar(answers: Answers, checks: bool, ask: Prompter | None) -> None:
    """The optional CalDAV account (docs/calendar.md): only with --calendar-url; its login is
    checked by listing the calendars, as `augure doctor` does."""
    if not answers.calendar_url:
        return
    if ask is None and not (answers.calendar_username and answers.calendar_password):
        raise UsageError("--calendar-url needs --calendar-username and --calendar-password")
    if ask is not None:
        answers.calendar_username = answers.calendar_username or ask.ask("Calendar username")
        answers.calendar_password = answers.calendar_password or ask.ask(
            "Calendar password (an app password where the provider has them)", secret=True
        )
    from augure.tools.calendar import CalendarSettings
    from augure.tools.calendar.actions import probe

    try:
        settings = CalendarSettings.model_validate(
            {
                "url": answers.calendar_url,
                "username": answers.calendar_username,
                "password": answers.calendar_password,
            }
        )
        if checks:
            await probe(settings)
    except Exception as exc:  # one line, never the password (the probe's lines hold none)
        raise UsageError(f"calendar: {str(exc).splitlines()[0]}") from None


Checker = Callable[[str], Awaitable[str | None]]


class Terminal:
    """Each answer checked as it is typed; a rejected one is asked again, never offered back
    as the default; an answer a flag gave is taken unless its check fails."""

    def __init__(self, ask: Prompter, checks: bool) -> None:
        self.ask, self.checks = ask, checks

    async def settle(self, answers: Answers) -> None:
        answers.token = await self.answer(TOKEN_QUESTION, answers.token, self._token, secret=True)
        answers.owner = await self.answer(OWNER_QUESTION, answers.owner, self._owner)
        await self._llm(answers)

    async def answer(
        self, question: str, given: str, check: Checker, *, default: str = "", secret: bool = False
    ) -> str:
        if given and (problem := await check(given)) is not None:
            self.say(problem)
            given = ""
        if given:
            return given
        for attempt in range(TRIES):
            value = self.ask.ask(question, default, secret=secret)
            problem = await check(value)
            if problem is None:
                return value
            if attempt == TRIES - 1:
                raise UsageError(problem)
            self.say(problem)
            default = ""
        raise AssertionError("unreachable")

    def say(self, problem: str) -> None:
        self.ask.stderr.write(f"{problem}\n")
        self.ask.stderr.flush()

    async def _token(self, token: str) -> str | None:
        if not token:
            return "the bot token is required: @BotFather gives it when you create the bot"
        if not self.checks:
            return None
        probe = await _telegram(Answers(token=token), TYPED)
        return None if probe.ok else probe.detail

    async def _owner(self, owner: str) -> str | None:
        if owner.strip().isdigit():
            return None
        return f"your Telegram user id is a number (@userinfobot tells you), not {owner!r}"

    async def _url(self, url: str) -> str | None:
        parts = urlsplit(url)
        if not url or (parts.scheme in ("http", "https") and parts.hostname):
            return None
        return f"the endpoint is an http:// or https:// address, not {url!r}"

    async def _llm(self, answers: Answers) -> None:
        """The endpoint, key and model are checked together (one call needs all three); a
        failure asks again the one it is about."""
        offer = ""
        for attempt in range(TRIES):
            answers.base_url = await self.answer(
                URL_QUESTION, answers.base_url, self._url, default=offer
            )
            if not answers.api_key:
                answers.api_key = self.ask.ask(KEY_QUESTION, secret=True)
            answers.model = answers.model or self.ask.ask("Model", DEFAULT_MODEL)
            if not self.checks:
                return
            probe = await _llm_probe(answers, TYPED)
            if probe.ok:
                return
            problem, offer = probe.detail, ""
            if probe.fault is Fault.ENDPOINT and not answers.base_url.rstrip("/").endswith("/v1"):
                offer = answers.base_url.rstrip("/") + "/v1"
                problem += f"; did you mean {offer}?"
            if attempt == TRIES - 1:
                raise UsageError(problem)
            self.say(problem)
            if probe.fault in (Fault.KEY, Fault.ACCESS, Fault.QUOTA):
                answers.api_key = ""
            elif probe.fault is Fault.MODEL:
                answers.model = ""
            else:
                answers.base_url = ""


def _write(home: Path, file: Path, answers: Answers) -> None:
    private_home(home)
    env_file = home / ENV_FILE_NAME
    values: dict[str, object] = {
        "llm.model": answers.model,
        "telegram.allowed_users": [int(answers.owner)],
    }
    if answers.base_url:
        values["llm.base_url"] = answers.base_url
    if _api_url() != TELEGRAM_API:  # the Bot API the token was checked against
        values["telegram.api_url"] = _api_url()
    if answers.calendar_url:
        values["tools.calendar.url"] = answers.calendar_url
        values["tools.calendar.username"] = answers.calendar_username
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(render(values, env_file=str(env_file)), encoding="utf-8")
    secrets = {"TELEGRAM_BOT_TOKEN": answers.token}
    if answers.api_key:
        secrets["OPENAI_API_KEY"] = answers.api_key
    if answers.calendar_url:
        secrets["AUGURE__TOOLS__CALENDAR__PASSWORD"] = answers.calendar_password
    write_env_file(env_file, secrets)


def write_env_file(path: Path, updates: dict[str, str]) -> None:
    """Set these variables in the env file, keeping its others; created and kept mode 600."""
    kept = {k: v for k, v in dotenv_values(path).items() if v is not None} if path.exists() else {}
    kept.update(updates)
    lines = [f"{name}={_quoted(value)}" for name, value in kept.items()]
    # Created with mode 600 from the start, so the secret is never readable by others.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def _quoted(value: str) -> str:
    if PLAIN_VALUE.fullmatch(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
