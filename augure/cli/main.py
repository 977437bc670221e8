"""The `augure` command (docs/reference/commands.md). Every failure the user can fix is one line,
exit 1."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from augure.common.import_guard import collector_paused, importing_without

# httpx loads its own command line (click, rich, pygments) whenever those are installed:
# time and memory at every start for a tool Augure never runs (docs/performance.md).
with importing_without("click"):
    import httpx  # noqa: F401

from augure import __version__
from augure.cli import audit as cli_audit
from augure.cli import backup
from augure.cli import dashboard as cli_dashboard
from augure.cli import init as cli_init
from augure.cli import jobs as cli_jobs
from augure.cli import limits as cli_limits
from augure.cli import mcp as cli_mcp
from augure.cli import recall as cli_recall
from augure.cli import skills as cli_skills
from augure.cli import tasks as cli_tasks
from augure.cli import usage as cli_usage
from augure.common.errors import UsageError
from augure.config.settings import Config, ConfigError, default_home, load_config, load_env_file
from augure.core.door.errors import StateError
from augure.core.door.types import INVOCATION_STATUSES as STATUSES
from augure.host import logs
from augure.host.home import HomeError, check_usable

log = logging.getLogger("augure")


# The command groups that declare their own parser, in the order `--help` lists them.
COMMAND_GROUPS = (
    cli_jobs,
    cli_limits,
    cli_usage,
    cli_tasks,
    cli_skills,
    cli_mcp,
    cli_dashboard,
    cli_recall,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="augure",
        description="Your personal AI assistant, on Telegram and in the terminal.",
        epilog="`augure COMMAND --help` describes each command and its options.",
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    _common_options(parser, top=True)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    cli_init.add_parser(commands)
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

    _approval_parsers(commands)
    for group in COMMAND_GROUPS:
        group.add_parser(commands)
    backup.add_parsers(commands)
    _describe(parser)
    _everywhere(parser)
    return parser


def _approval_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The audit and the approvals: invocations, approvals, approve, reject, rules."""
    invocations = commands.add_parser("invocations", help="recent tool calls, newest first")
    invocations.add_argument("--status", help=f"only this status: {', '.join(STATUSES)}")
    invocations.add_argument("--tool", help="only calls of this tool")
    invocations.add_argument("--limit", default=str(cli_audit.DEFAULT_LIMIT), help="how many (20)")
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


class _Version(argparse.Action):
    """`--version`: the commit is looked up only when asked, never on an ordinary start."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        commit = _git_commit()
        print(f"augure {__version__}" + (f" (git {commit})" if commit else ""))
        parser.exit()


def _git_commit() -> str | None:
    """The checkout's short commit when this package is the top of a git work tree; for an
    installed copy, the commit its build recorded (setup.py); None when neither is known."""
    return _checkout_commit() or _recorded_commit()


def _recorded_commit() -> str | None:
    from importlib.resources import files

    try:
        return files("augure").joinpath("commit.txt").read_text().strip() or None
    except OSError:
        return None


def _checkout_commit() -> str | None:
    """None for an installed copy, or when git is missing or refuses (another owner's
    repository)."""
    import subprocess

    package = Path(__file__).resolve().parents[1]  # augure/, beside the checkout's top
    command = ["git", "-C", str(package), "rev-parse", "--show-toplevel", "--short", "HEAD"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.splitlines()
    # A package installed inside some other project's repository is not that project's commit.
    if done.returncode != 0 or len(lines) != 2 or Path(lines[0]) != package.parent:
        return None
    return lines[1]


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
    args = _parser().parse_args(argv)
    logs.start(args.verbose)
    try:
        if args.command != "doctor":  # which reports it as one of its checks
            check_usable(default_home())
        if args.command in HOME_HANDLERS:
            # No config needed: these make, save or fill a home. They talk to the owner
            # directly, so routine request logs would only bury their one line.
            if not args.verbose:
                logging.getLogger().setLevel(logging.WARNING)
            return asyncio.run(HOME_HANDLERS[args.command](args))
        load_env_file()
        config = load_config(args.config)
        # Only the bot keeps a log file: the other commands are short and answer on stdout.
        logs.protect(config, to_file=args.command == "run")
        handler = HANDLERS[args.command]
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
    "invocations": cli_audit.invocations,
    "approvals": cli_audit.approvals,
    "approve": cli_audit.approve,
    "reject": cli_audit.reject,
    "rules": cli_audit.rules,
    "jobs": cli_jobs.jobs,
    "limits": cli_limits.limits,
    "usage": cli_usage.usage,
    "tasks": cli_tasks.tasks,
    "skills": cli_skills.skills,
    "mcp": cli_mcp.mcp,
    "dashboard": cli_dashboard.dashboard,
    "recall": cli_recall.recall,
    "forget": cli_recall.forget,
}

# Commands that work on AUGURE_HOME itself, without loading (or needing) a valid config.
HOME_HANDLERS: dict[str, Callable[[argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "init": cli_init.init,
    "backup": backup.backup_command,
    "restore": backup.restore_command,
}


if __name__ == "__main__":
    sys.exit(main())
