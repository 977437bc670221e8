"""The `augure` command (SPEC §1). Every failure the user can fix is one line, exit 1."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from augure import cli_audit, cli_jobs, cli_skills, logs
from augure.cli_audit import UsageError
from augure.config import Config, ConfigError, load_config
from augure.store.audit import STATUSES

log = logging.getLogger("augure")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="augure", description="Your personal AI assistant.")
    parser.add_argument(
        "--config", type=Path, help="config file (default $AUGURE_HOME/augure.toml)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("run", help="start the Telegram bot")
    commands.add_parser("chat", help="talk to the agent in this terminal")
    commands.add_parser("doctor", help="check the configuration and the services")

    memory = commands.add_parser("memory", help="the memory files")
    memory_commands = memory.add_subparsers(dest="action", required=True)
    memory_commands.add_parser("list", help="list memory files")
    show = memory_commands.add_parser("show", help="print one memory file")
    show.add_argument("path")

    tools = commands.add_parser("tools", help="the tools")
    tools_commands = tools.add_subparsers(dest="action", required=True)
    listing = tools_commands.add_parser("list", help="list the tools")
    listing.add_argument("--json", action="store_true", help="one JSON array on stdout")
    run = tools_commands.add_parser("run", help="run one tool")
    run.add_argument("name")
    run.add_argument("--args", default="{}", help="the arguments as a JSON object")

    invocations = commands.add_parser("invocations", help="recent tool calls, newest first")
    invocations.add_argument("--status", help=f"only this status: {', '.join(STATUSES)}")
    invocations.add_argument("--tool", help="only calls of this tool")
    invocations.add_argument("--limit", default=str(cli_audit.DEFAULT_LIMIT), help="how many (20)")
    invocations.add_argument("--json", action="store_true", help="one JSON array on stdout")
    approvals = commands.add_parser("approvals", help="pending approval requests and rules")
    approvals.add_argument("--json", action="store_true", help="one JSON array on stdout")
    approve = commands.add_parser("approve", help="approve a pending request")
    approve.add_argument("id")
    reject = commands.add_parser("reject", help="reject a pending request")
    reject.add_argument("id")
    reject.add_argument("--reason", help="told to the assistant")

    rules = commands.add_parser("rules", help="always-allow and deny rules (default: list)")
    rules_commands = rules.add_subparsers(dest="action")
    rules_commands.add_parser("list", help="list the rules")
    revoke = rules_commands.add_parser("revoke", help="delete a rule")
    revoke.add_argument("rule_id")
    for effect in ("allow", "deny"):
        rule = rules_commands.add_parser(effect, help=f"always {effect} calls matching PATTERN")
        rule.add_argument("pattern", help="`*` and `?` over targets, e.g. memory_write:path=a/*")
    cli_jobs.add_parser(commands)
    cli_skills.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logs.start(args.verbose)
    try:
        config = load_config(args.config)
        # Only the bot keeps a log file: the other commands are short and answer on stdout.
        logs.protect(config, to_file=args.command == "run")
        handler = HANDLERS[args.command]
        return asyncio.run(handler(config, args))
    except (ConfigError, UsageError) as exc:
        print(f"augure: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


async def _run(config: Config, args: argparse.Namespace) -> int:
    from augure.channels.telegram.bot import serve

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await serve(config, stop)
    return 0


async def _chat(config: Config, args: argparse.Namespace) -> int:
    from augure.app import Core
    from augure.channels.console import chat

    core = await Core.open(config)
    try:
        await chat(core)
    finally:
        await core.close()
    return 0


async def _doctor(config: Config, args: argparse.Namespace) -> int:
    from augure.doctor import run_checks

    failed = False
    async for check in run_checks(config):
        print(check.line())
        failed |= check.required and not check.ok
    return 1 if failed else 0


async def _memory(config: Config, args: argparse.Namespace) -> int:
    from augure.memory.store import MemoryPathError, MemoryStore

    memory = MemoryStore(config.memory_dir)
    if args.action == "list":
        for name, size in memory.list():
            print(f"{size:>8}  {name}")
        return 0
    try:
        print(memory.read(args.path), end="")
    except (MemoryPathError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    return 0


async def _tools(config: Config, args: argparse.Namespace) -> int:
    from augure.app import Core

    core = await Core.open(config)
    try:
        registry = core.registry
        if args.action == "list":
            tools = registry.list()
            if args.json:
                print(json.dumps([describe_tool(registry.description(t), t) for t in tools]))
            else:
                for tool in tools:
                    print(f"{tool.name:<14} {tool.egress.value:<9} {registry.description(tool)}")
            return 0
        if registry.get(args.name) is None:
            raise UsageError(f"unknown tool {args.name!r}; see `augure tools list`")
        try:
            arguments = json.loads(args.args)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args is not valid JSON: {exc.msg}") from None
        if not isinstance(arguments, dict):
            raise UsageError("--args must be a JSON object")
        # The same gate as in chat: at a terminal the owner answers y/N; from a script there is
        # no one to ask, so a call that needs approval is rejected.
        if sys.stdin.isatty():
            from augure.channels.console import ConsoleApprover

            core.gate.approver = ConsoleApprover(core.gate, sys.stdin, sys.stderr)
        ctx = dataclasses.replace(registry.context, origin="cli", chat_id=None)
        result = await registry.execute(args.name, arguments, ctx)
        print(result.output)
        return 0 if result.success else 1
    finally:
        await core.close()


def describe_tool(description: str, tool: Any) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": description,
        "parameters": tool.parameters,
        "risk": tool.risk,
        "egress": tool.egress.value,
    }


HANDLERS: dict[str, Callable[[Config, argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "run": _run,
    "chat": _chat,
    "doctor": _doctor,
    "memory": _memory,
    "tools": _tools,
    "invocations": cli_audit.invocations,
    "approvals": cli_audit.approvals,
    "approve": cli_audit.approve,
    "reject": cli_audit.reject,
    "rules": cli_audit.rules,
    "jobs": cli_jobs.jobs,
    "skills": cli_skills.skills,
}


if __name__ == "__main__":
    sys.exit(main())
