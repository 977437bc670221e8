"""`augure tasks [--json]`: background work, running first, then the newest
(docs/reference/execution.md#background-work)."""

from __future__ import annotations

import argparse
import json

from augure.background.tools import line
from augure.config.settings import Config
from augure.core.door.types import TASK_STATUSES


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tasks = commands.add_parser("tasks", help="background tasks, running ones first")
    tasks.add_argument("--status", choices=TASK_STATUSES, help="only tasks in this state")
    tasks.add_argument("--limit", type=int, default=50, help="at most this many (50)")
    tasks.add_argument("--json", action="store_true", help="one JSON array on stdout")


async def tasks(config: Config, args: argparse.Namespace) -> int:
    from augure.core.lifespan import Augure

    async with Augure.reading(config) as door:
        rows = await door.reports.tasks(limit=max(1, args.limit), status=args.status)
    if args.json:
        print(json.dumps([row.as_json() for row in rows], indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("No background tasks.")
    for row in rows:
        print(line(row))
    return 0
