"""`augure limits [--json]`: each tool profile's limits with today's use
(docs/reference/limits.md#seeing-todays-use)."""

from __future__ import annotations

import argparse
import json

from augure.config.settings import Config
from augure.tools.limits import describe


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    limits = commands.add_parser("limits", help="the tool profiles' limits with today's use")
    limits.add_argument("--json", action="store_true", help="one JSON array on stdout")


async def limits(config: Config, args: argparse.Namespace) -> int:
    from augure.core.lifespan import Augure

    async with Augure.reading(config) as door:
        uses = await door.reports.limits()
    if args.json:
        rows = [
            {
                "profile": use.profile,
                "origins": use.origins,
                "tools": use.glob,
                **use.limit.model_dump(),
                "used_this_minute": use.minute,
                "used_today": use.today,
                "cost_today": round(use.cost_today, 6),
            }
            for use in uses
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not uses:
        print(
            "No tool profiles: add [profiles.NAME] to augure.toml (see docs/reference/limits.md)."
        )
    for use in uses:
        print(describe(use))
    return 0
