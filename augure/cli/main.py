"""The `augure` command (docs/reference/commands.md). Every failure the user can fix is one line,
exit 1."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from augure.common.import_guard import collector_paused, importing_without

# httpx loads its own command line (click, rich, pygments) whenever those are installed:
# time and memory at every start for a tool Augure never runs (docs/performance.md).
with importing_without("click"):
    import httpx  # noqa: F401

from augure.cli.version import PrintVersion
from augure.common.errors import UsageError
from augure.config.settings import Config, ConfigError, default_home, load_config, load_env_file
from augure.core.door.errors import StateError
from augure.core.door.types import INVOCATION_STATUSES as STATUSES
from augure.host import logs
from augure.host.home import HomeError, check_usable

log = logging.getLogger("augure")

# The commands whose parsers and handlers are defined here. Their command line is read
# without importing the other commands' modules, which `augure run` would otherwise load at
# every start for nothing (docs/performance.md).
OWN_COMMANDS = ("run", "chat", "doctor", "status", "memory", "tools")


def _groups() -> tuple[ModuleType, ...]:
    """The command groups that declare their own parser, in the order `--help` lists them."""
    from augure.cli import dashboard, jobs, limits, mcp, recall, skills, tasks, usage

    return (jobs, limits, usage, tasks, skills, mcp, dashboard, recall)


def _command(argv: Sequence[str]) -> str | None:
    """The command `argv` names when only the options every command takes come before it;
    None otherwise (`--help`, `--version`, an abbreviated option: the whole parser reads it)."""
    tokens = iter(argv)
    for token in tokens:
        if token in ("-v", "--verbose") or token.startswith("--config="):
            continue
        if token == "--config":
            next(tokens, None)
            continue
        return None if token.startswith("-") else token
    return None


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; for one of OWN_COMMANDS, only what reads that command (the
    same parser for it, without the other commands)."""
    whole = command not in OWN_COMMANDS
    parser = argparse.ArgumentParser(
        prog="augure",
        description="Your personal AI assistant, on Telegram and in the terminal.",
        epilog="`augure COMMAND --help` describes each command and its options.",
    )
    parser.add_argument("--version", action=PrintVersion, help="print the version and exit")
    _common_options(parser, top=True)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if whole:
        from augure.cli import init

        init.add_parser(commands)
    commands.add_parser("run", help="start the Telegram bot until SIGINT or SIGTERM")
    commands.add_parser("chat", help="talk to the agent in this terminal")
    commands.add_parser("doctor", help="check the config, the services and every tool")
    commands.add_parser("status", help="is a bot running on this home? (exit 0 yes, 3 no)")

    memory = commands.add_parser("memory", help="the memory files")
    memory_commands = memory.add_subparsers(dest="action", required=True, metavar="ACTION")
    memory_commands.add_parser("list", help="list memory files")
    show = memory_commands.add_parser("show", help="print one memory file")
    show.add_argument("path", help="relative to the memory folder, e.g. identity.md")

    tools = commands.add_parser("tools", help="list the tools, or run one")
    tools_commands = tools.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = tools_commands.add_parser("list", help="list the tools")
    listing.add_argument("--json", action="store_true", help="one JSON array on stdout")
    run = tools_commands.add_parser("run", help="run one tool, with the same approval as in chat")
    run.add_argument("name", help="the tool's name (see `augure tools list`)")
    run.add_argument("--args", default="{}", help="the arguments as a JSON object")

    if whole:
        from augure.cli import backup

        _approval_parsers(commands)
        for group in _groups():
            group.add_parser(commands)
        backup.add_parsers(commands)
    _describe(parser)
    _everywhere(parser)
    return parser


def _approval_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The audit and the approvals: invocations, approvals, approve, reject, rules."""
    from augure.cli.audit import DEFAULT_LIMIT

    invocations = commands.add_parser("invocations", help="recent tool calls, newest first")
    invocations.add_argument("--status", help=f"only this status: {', '.join(STATUSES)}")
    invocations.add_argument("--tool", help="only calls of this tool")
    invocations.add_argument("--limit", default=str(DEFAULT_LIMIT), help="how many (20)")
    invocations.add_argument("--json", action="store_true", help="one JSON array on stdout")
    approvals = commands.add_parser("approvals", help="pending approval requests and rules")
    approvals.add_argument("--json", action="store_true", help="one JSON array on stdout")
    approve = commands.add_parser("approve", help="approve a pending request")
    approve.add_argument("id", help="the request id (see `augure approvals`)")
    reject = commands.add_parser("reject", help="reject a pending request")
    reject.add_argument("id", help="the request id (see `augure approvals`)")
    reject.add_argument("--reason", help="told to the assistant")

    rules = commands.add_parser("rules", help="always-allow and deny rules (default: list)")
    rules_commands = rules.add_subparsers(dest="action", metavar="ACTION")
    rules_commands.add_parser("list", help="list the rules")
    revoke = rules_commands.add_parser("revoke", help="delete a rule")
    revoke.add_argument("rule_id", help="the rule id (see `augure rules`)")
    for effect in ("allow", "deny"):
        rule = rules_commands.add_parser(effect, help=f"always {effect} calls matching PATTERN")
        rule.add_argument("pattern", help="`*` and `?` over targets, e.g. memory_write:path=a/*")


def _common_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    # A command's copy has no default, so leaving it out keeps what was given before it.
    config_default, verbose_default = (None, False) if top else (argparse.SUPPRESS,) * 2
    parser.add_argument(
        "--config",
        type=Path,
        default=config_default,
        help="config file (default $AUGURE_HOME/augure.toml)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=verbose_default, help="debug logging"
    )


def _everywhere(parser: argparse.ArgumentParser) -> None:
    """`--config` and `-v` also after any command (`augure run --config F`), as users type."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for sub in action.choices.values():
            _common_options(sub, top=False)
            _everywhere(sub)


def _describe(parser: argparse.ArgumentParser) -> None:
    """Each command's own --help opens with the line `augure --help` shows for it."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            if sub.description is None:
                sub.description = helps.get(name)
            _describe(sub)


def main(argv: list[str] | None = None) -> int:
    args = _parser(_command(sys.argv[1:] if argv is None else argv)).parse_args(argv)
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


if TYPE_CHECKING:  # imported where a command needs it: `augure --help` stays quick
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
