"""`augure skills list|show|run|pause|resume|delete|install|update`: skills from the shell.

Everything runs in this process with a Core on the same home; a running bot sees state changes
at once (they are in state.db) and the scheduler within a second. `run` and `install` go
through the executor as `augure tools run` does: at a terminal the owner answers y/N, from a
script nobody can approve, so a call that needs approval is rejected. `update` offers each hub
skill whose hub has something newer (a newer version, or another commit of a GitHub hub) the
same way, one approval each, showing what changed.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from augure.common.errors import UsageError
from augure.config.settings import Config
from augure.skills.install import Current
from augure.skills.model import SkillError, check_id

if TYPE_CHECKING:
    from augure.skills.service import SkillService
    from augure.tools.result import ToolResult


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    skills = commands.add_parser("skills", help="skills (default: list)")
    actions = skills.add_subparsers(dest="action")
    actions.add_parser("list", help="the skills with state, trigger and last run")
    for name, text in [
        ("show", "a skill's details and recent runs"),
        ("run", "run an active skill now, here"),
        ("pause", "pause a skill (and its schedule)"),
        ("resume", "resume a paused skill"),
        ("delete", "delete a skill and its files"),
        ("install", "install or update a skill from the hubs (skills.hub_url, skills.hubs)"),
    ]:
        action = actions.add_parser(name, help=text)
        action.add_argument("id", help="the skill id (see `augure skills list`)")
        if name == "install":
            action.add_argument("--hub", help="which hub: OWNER/REPO[/PATH] or the URL")
    update = actions.add_parser("update", help="offer what is newer on the hubs, asking each")
    update.add_argument("id", nargs="?", help="only this skill (default: every hub skill)")


async def skills(config: Config, args: argparse.Namespace) -> int:
    from augure.channels.console import terminal_approvers
    from augure.core.lifespan import Augure

    action = args.action or "list"
    if action not in ("list", "update") or getattr(args, "id", None) is not None:
        try:
            check_id(args.id)
        except SkillError as exc:
            raise UsageError(str(exc)) from None
    async with Augure.running(config, approvers=terminal_approvers()) as door:
        service = door.running.skills
        if action == "list":
            listed = await door.reports.skills()
            for record, meta, last in listed:
                trigger = f"cron `{meta.schedule}`" if meta and meta.schedule else "manual"
                print(f"{record.id} {record.version} [{record.state}] {trigger}; last run: {last}")
            if not listed:
                print("No skills.")
            return 0
        if action == "update":
            return await _update(service, door.running.run_tool, args.id)
        if action in ("run", "install"):
            tool = "run_skill" if action == "run" else "install_skill"
            arguments = {"id": args.id} if action == "run" else {"skill_id": args.id}
            if action == "install" and args.hub:
                arguments["hub"] = args.hub
            result = await door.running.run_tool(tool, arguments)
            if action == "install" and not result.success:
                raise UsageError(" ".join(result.content.split()))
            print(result.output)  # a failed run's output is its report: stdout, exit 1
            return 0 if result.success else 1
        try:
            if action == "show":
                print(await service.files.describe(args.id, service.max_failures))
            elif action == "pause":
                print(await service.pause(args.id))
            elif action == "resume":
                print(await service.resume(args.id))
            else:
                print(await service.delete(args.id))
        except SkillError as exc:
            raise UsageError(str(exc)) from None
        return 0


async def _update(
    service: SkillService,
    run_tool: Callable[[str, dict[str, Any]], Awaitable[ToolResult]],
    only: str | None,
) -> int:
    """Each hub skill: up to date, or its newer files offered through install_skill (which
    shows the commit, what changed and every file, and asks). 1 if any check failed."""
    records = await service.hubs.from_hubs()
    if only is not None:
        records = [r for r in records if r.id == only]
        if not records:
            raise UsageError(f"skill {only} was not installed from a hub")
    if not records:
        print("No skills from a hub.")
        return 0
    failed = False
    for record in records:
        offer = await service.hubs.prepare(record.id)
        if isinstance(offer, Current):
            print(f"{record.id}: up to date ({offer})")
            continue
        if isinstance(offer, str):
            print(f"{record.id}: {offer}")
            failed = True
            continue
        result = await run_tool("install_skill", {"skill_id": record.id})
        print(f"{record.id}: {' '.join(result.content.split())}")
        failed = failed or not result.success
    return 1 if failed else 0
