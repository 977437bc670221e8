"""The `augure` command (docs/reference/commands.md). Every failure the user can fix is one line,
exit 1."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from collections.abc import Callable, Coroutine
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from augure.common.import_guard import collector_paused, importing_without

# httpx loads its own command line (click, rich, pygments) whenever those are installed:
# time and memory at every start for a tool Augure never runs (docs/performance.md).
with importing_without("click"):
    import httpx  # noqa: F401

from augure.common.errors import UsageError
from augure.config.settings import Config, ConfigError, default_home, load_config, load_env_file
from augure.core.door.errors import StateError
from augure.host import logs
from augure.host.home import HomeError, check_usable

log = logging.getLogger("augure")


def main(argv: list[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    logs.start(args.verbose)
    try:
        if args.command != "doctor":  # which reports it as one of its checks
            check_usable(default_home())
        if args.command in HOME_COMMANDS:
            # No config needed: these make, save or fill a home. They talk to the owner
            # directly, so routine request logs would only bury their one line.
            if not args.verbose:
                logging.getLogger().setLevel(logging.WARNING)
            return asyncio.run(_home_handlers()[args.command](args))
        load_env_file()
        config = load_config(args.config)
        # Only the bot keeps a log file: the other commands are short and answer on stdout.
        logs.protect(config, to_file=args.command == "run")
        handler = HANDLERS.get(args.command) or _group_handlers()[args.command]
        return asyncio.run(handler(config, args))
    except (ConfigError, UsageError, StateError, HomeError) as exc:
        print(f"augure: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _arguments(argv: list[str]) -> argparse.Namespace:
    if argv == ["run"]:
        # How the bot is started (the image, a service): nothing to parse, and argparse with
        # gettext is ~0.35 MB and ~3 ms of every start (docs/performance.md).
        return cast("argparse.Namespace", SimpleNamespace(**RUN))
    from augure.cli.parser import build_parser, command_named

    return build_parser(command_named(argv)).parse_args(argv)


# What the parser reads from `augure run` alone (tests/unit/test_cli_arguments.py holds it).
RUN = {"config": None, "verbose": False, "command": "run"}

if TYPE_CHECKING:  # imported where a command needs it: `augure --help` stays quick
    import argparse

    from augure.core.door.running import RunningDesk


async def _run(config: Config, args: argparse.Namespace) -> int:
    from augure.common.keepalive import load_tls_early

    load_tls_early()  # overlaps python-telegram-bot's slow import below
    with collector_paused():
        from augure.channels.telegram.bot import serve

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    companions = []
    if config.dashboard.enabled:
        from augure.dashboard.server import Dashboard

        companions.append(Dashboard(config.dashboard))
    await serve(config, stop, companions=companions)
    return 0


async def _chat(config: Config, args: argparse.Namespace) -> int:
    from augure.channels.console import ConsoleChannel, chat
    from augure.core.lifespan import Augure

    console = ConsoleChannel(sys.stdin, sys.stdout)
    async with Augure.running(config, approvers=[console], notifier=console) as door:
        await chat(door.chat, console)
    return 0


async def _doctor(config: Config, args: argparse.Namespace) -> int:
    from augure.cli.doctor import run_checks

    failed = False
    async for check in run_checks(config):
        print(check.line())
        failed |= check.required and not check.ok
    return 1 if failed else 0


async def _status(config: Config, args: argparse.Namespace) -> int:
    from augure.host.home import holder

    running = holder(config.home)
    if running is None:
        print(f"No bot is running on {config.home}.")
        return 3
    update = _when(running.last_update_at) if running.last_update_at else "none yet"
    print(
        f"Augure is running on {config.home}: pid {running.pid}, "
        f"since {_when(running.started_at)}, last update received {update}."
    )
    return 0


def _when(timestamp: float) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


async def _memory(config: Config, args: argparse.Namespace) -> int:
    from augure.core.lifespan import Augure
    from augure.memory.store import MemoryPathError

    async with Augure.reading(config) as door:
        if args.action == "list":
            for name, size in door.reports.memory_files():
                print(f"{size:>8}  {name}")
            return 0
        try:
            print(door.reports.read_memory(args.path), end="")
        except (MemoryPathError, FileNotFoundError) as exc:
            raise UsageError(str(exc)) from None
    return 0


async def _tools(config: Config, args: argparse.Namespace) -> int:
    from augure.channels.console import terminal_approvers
    from augure.core.lifespan import Augure

    async with Augure.running(config, approvers=terminal_approvers()) as door:
        return await _tool_command(door.running, args)


async def _tool_command(running: RunningDesk, args: argparse.Namespace) -> int:
    """`augure tools list|run` on an open core (its MCP servers' tools included)."""
    down = await running.servers_started()  # their tools are listed and run like built-ins
    if args.action == "list":
        tools = running.tools()
        if args.json:
            print(json.dumps([describe_tool(running.describe(t), t) for t in tools]))
        else:
            for tool in tools:
                print(f"{tool.name:<14} {tool.approval.egress.value:<9} {running.describe(tool)}")
        for line in down:  # those servers' tools are missing above: say why
            print(line, file=sys.stderr)
        return 0
    if not running.knows(args.name):
        raise UsageError(f"unknown tool {args.name!r}; see `augure tools list`")
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--args is not valid JSON: {exc.msg}") from None
    if not isinstance(arguments, dict):
        raise UsageError("--args must be a JSON object")
    result = await running.run_tool(args.name, arguments)
    print(result.output)
    return 0 if result.success else 1


def describe_tool(description: str, tool: Any) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": description,
        "parameters": tool.parameters,
        "risk": tool.approval.risk,
        "egress": tool.approval.egress.value,
    }


HANDLERS: dict[str, Callable[[Config, argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "run": _run,
    "chat": _chat,
    "doctor": _doctor,
    "status": _status,
    "memory": _memory,
    "tools": _tools,
}


def _group_handlers() -> dict[
    str, Callable[[Config, argparse.Namespace], Coroutine[Any, Any, int]]
]:
    """The other commands that need a config, from their modules (imported when one runs)."""
    from augure.cli import audit, dashboard, jobs, limits, mcp, recall, skills, tasks, usage

    return {
        "invocations": audit.invocations,
        "approvals": audit.approvals,
        "approve": audit.approve,
        "reject": audit.reject,
        "rules": audit.rules,
        "jobs": jobs.jobs,
        "limits": limits.limits,
        "usage": usage.usage,
        "tasks": tasks.tasks,
        "skills": skills.skills,
        "mcp": mcp.mcp,
        "dashboard": dashboard.dashboard,
        "recall": recall.recall,
        "forget": recall.forget,
    }


# Commands that work on AUGURE_HOME itself, without loading (or needing) a valid config.
HOME_COMMANDS = ("init", "backup", "restore")


def _home_handlers() -> dict[str, Callable[[argparse.Namespace], Coroutine[Any, Any, int]]]:
    from augure.cli import backup, init

    return {
        "init": init.init,
        "backup": backup.backup_command,
        "restore": backup.restore_command,
    }


if __name__ == "__main__":
    sys.exit(main())
