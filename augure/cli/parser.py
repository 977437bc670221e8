"""The `augure` command line, read with argparse (docs/reference/commands.md): the whole of
it, or for one of the bot's own commands only what reads that command."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from augure.cli.version import PrintVersion
from augure.core.door.types import INVOCATION_STATUSES as STATUSES

# The commands whose parsers and handlers are defined here. Their command line is read
# without importing the other commands' modules, which `augure run` would otherwise load at
# every start for nothing (docs/performance.md).
OWN_COMMANDS = ("run", "chat", "doctor", "status", "memory", "tools")


def _groups() -> tuple[ModuleType, ...]:
    """The command groups that declare their own parser, in the order `--help` lists them."""
    from augure.cli import dashboard, jobs, limits, mcp, recall, skills, tasks, usage

    return (jobs, limits, usage, tasks, skills, mcp, dashboard, recall)


def command_named(argv: Sequence[str]) -> str | None:
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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
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
