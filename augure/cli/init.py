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

from dotenv import dotenv_values

from augure.cli import probes
from augure.common.errors import UsageError
from augure.config.settings import ENV_FILE_NAME, default_home
from augure.config.template import render
from augure.host.home import private_home

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
    init.add_argument(
        "--non-interactive", action="store_true", help="never ask: take the flags, fail if missing"
    )
    init.add_argument("--force", action="store_true", help="replace an existing augure.toml")


@dataclass
class Answers:
    token: str = ""
    owner: str = ""
    base_url: str = ""
    api_key: str = ""
    model: str = ""


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
    )
    ask = None if args.non_interactive else Prompter(sys.stdin, sys.stderr)
    await _settle(answers, ask)
    _write(home, file, answers)
    print(f"Wrote {file} and {home / ENV_FILE_NAME} (mode 600). Start the bot: augure run")
    return 0


async def _settle(answers: Answers, ask: Prompter | None) -> None:
    """Fill in and check every answer; at the terminal a rejected one is asked again."""
    await _until_ok(
        ask,
        lambda again: _ask_telegram(answers, ask, again),
        lambda: _check_telegram(answers),
    )
    await _until_ok(ask, lambda again: _ask_llm(answers, ask, again), lambda: _check_llm(answers))


async def _until_ok(
    ask: Prompter | None,
    fill: Callable[[bool], None],
    check: Callable[[], Awaitable[str | None]],
    tries: int = 3,
) -> None:
    for attempt in range(tries):
        fill(attempt > 0)
        problem = await check()
        if problem is None:
            return
        if ask is None or attempt == tries - 1:
            raise UsageError(problem)
        ask.stderr.write(f"{problem}\n")
        ask.stderr.flush()


def _ask_telegram(answers: Answers, ask: Prompter | None, again: bool) -> None:
    """Asks what no flag gave; after a failed check (`again`), asks both anew."""
    if ask is None:
        for flag, value in (("--token", answers.token), ("--owner", answers.owner)):
            if not value:
                raise UsageError(f"{flag} is required with --non-interactive")
        return
    if again or not answers.token:
        answers.token = ask.ask("Telegram bot token (from @BotFather)", secret=True)
    if again or not answers.owner:
        answers.owner = ask.ask(
            "Your Telegram user id (a number; @userinfobot tells you)", answers.owner
        )


def _ask_llm(answers: Answers, ask: Prompter | None, again: bool) -> None:
    if ask is None:
        answers.model = answers.model or DEFAULT_MODEL
        return
    # A flag that was given counts as an answer, unless its check failed.
    if again or not answers.base_url:
        answers.base_url = ask.ask("LLM endpoint (empty = OpenAI)", answers.base_url)
    if again or not answers.api_key:
        answers.api_key = ask.ask("LLM API key (empty for a local server)", secret=True)
    if again or not answers.model:
        answers.model = ask.ask("Model", answers.model or DEFAULT_MODEL)


async def _check_telegram(answers: Answers) -> str | None:
    if not answers.owner.strip().isdigit():
        return f"--owner must be your numeric Telegram user id, not {answers.owner!r}"
    if not answers.token:
        return "the bot token is required (--token)"
    # The Bot API root is not asked (almost nobody runs their own); tests and self-hosted Bot
    # API servers set it in the environment, as for `augure run`.
    api_url = os.environ.get("AUGURE_TELEGRAM_API_URL") or TELEGRAM_API
    probe = await probes.telegram(
        answers.token, api_url, token_from="--token", url_from="AUGURE_TELEGRAM_API_URL"
    )
    return None if probe.ok else probe.detail


async def _check_llm(answers: Answers) -> str | None:
    probe = await probes.llm(
        answers.base_url or None,
        answers.api_key or "-",
        answers.model,
        key_from="--api-key",
        url_from="--base-url",
        model_from="--model",
    )
    return None if probe.ok else probe.detail


def _write(home: Path, file: Path, answers: Answers) -> None:
    private_home(home)
    env_file = home / ENV_FILE_NAME
    values: dict[str, object] = {
        "llm.model": answers.model,
        "telegram.allowed_users": [int(answers.owner)],
    }
    if answers.base_url:
        values["llm.base_url"] = answers.base_url
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(render(values, env_file=str(env_file)), encoding="utf-8")
    secrets = {"TELEGRAM_BOT_TOKEN": answers.token}
    if answers.api_key:
        secrets["OPENAI_API_KEY"] = answers.api_key
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
