"""`augure tasks [--json]`: background work, running first, then the newest
(docs/reference/execution.md#background-work)."""

from __future__ import annotations

import argparse
import json

from augure.background.tools import line
from augure.config.settings import Config
from augure.store.state import Store
from augure.store.tasks import STATUSES, Tasks


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tasks = commands.add_parser("tasks", help="background tasks, running ones first")
    tasks.add_argument("--status", choices=STATUSES, help="only tasks in this state")
    tasks.add_argument("--limit", type=int, default=50, help="at most this many (50)")
    tasks.add_argument("--json", action="store_true", help="one JSON array on stdout")


async def tasks(config: Config, args: argparse.Namespace) -> int:
    store = await Store.open(config.db_path)
    try:
        rows = await Tasks(store.db).list(limit=max(1, args.limit), status=args.status)
    finally:
        await store.close()
    if args.json:
        print(json.dumps([row.as_json() for row in rows], indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("No background tasks.")
    for row in rows:
        print(line(row))
    return 0
