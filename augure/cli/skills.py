"""`augure skills list|show|run|pause|resume|delete|install`: skills from the shell.

Everything runs in this process with a Core on the same home; a running bot sees state changes
at once (they are in state.db) and the scheduler within a second. `run` and `install` go
through the executor as `augure tools run` does: at a terminal the owner answers y/N, from a
script nobody can approve, so a call that needs approval is rejected.
"""

from __future__ import annotations

import argparse

from augure.common.errors import UsageError
from augure.config.settings import Config
from augure.skills.model import SkillError, check_id


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
        ("install", "install or update a skill from skills.hub_url"),
    ]:
        action = actions.add_parser(name, help=text)
        action.add_argument("id", help="the skill id (see `augure skills list`)")


async def skills(config: Config, args: argparse.Namespace) -> int:
    from augure.channels.console import terminal_approvers
    from augure.core.lifespan import Augure

    action = args.action or "list"
    if action != "list":
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
        if action in ("run", "install"):
            tool = "run_skill" if action == "run" else "install_skill"
            key = "id" if action == "run" else "skill_id"
            result = await door.running.run_tool(tool, {key: args.id})
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
