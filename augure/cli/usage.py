"""`augure usage [--json]`: spend today and this month against the `[budget]` caps, by kind
of work and by model (docs/reference/spend.md#augure-usage---json)."""

from __future__ import annotations

import argparse
import json

from augure.config.settings import Config
from augure.core.spend import SpendCaps, report_json, report_lines
from augure.store.spend import Ledger
from augure.store.state import Store


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    usage = commands.add_parser("usage", help="spend today and this month against the caps")
    usage.add_argument("--json", action="store_true", help="one JSON object on stdout")


async def usage(config: Config, args: argparse.Namespace) -> int:
    store = await Store.open(config.db_path)
    try:
        report = await SpendCaps(config, Ledger(store.db)).report()
    finally:
        await store.close()
    if args.json:
        print(json.dumps(report_json(report), indent=2))
        return 0
    print("\n".join(report_lines(report)))
    if not report.month.total.calls and not report.month.total.skipped:
        print("No model call recorded this month.")
    return 0
