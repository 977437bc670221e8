"""`augure dashboard`: the web dashboard in a process of its own, beside a running bot or not.

It never takes the home's lock and runs nothing (augure/dashboard/standalone.py): what it
decides reaches a running bot through state.db, as `augure approve` does, and the bot edits
its Telegram request message. See docs/reference/dashboard.md.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

from augure.config.settings import Config


def add_parser(commands: Any) -> None:
    dashboard = commands.add_parser(
        "dashboard", help="serve the web dashboard and print a one-time login URL"
    )
    dashboard.add_argument("--host", help="address to bind (default [dashboard] host, 127.0.0.1)")
    dashboard.add_argument("--port", type=int, help="TCP port (default [dashboard] port, 8765)")


async def dashboard(config: Config, args: argparse.Namespace) -> int:
    from augure.core.lifespan import Augure
    from augure.dashboard.server import Dashboard
    from augure.host.home import holder

    server = Dashboard(config.dashboard, args.host, args.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    bot = holder(config.home)
    started_at = bot.started_at if bot and bot.started_at else None
    async with Augure.reading(config, started_at=started_at, reject_stale=bot is None) as door:
        if bot is not None:
            print(
                f"Beside the bot running on this home (pid {bot.pid}): it runs what you "
                "approve here and updates Telegram.",
                flush=True,
            )
        try:
            await server.start(door)
            await stop.wait()
        finally:
            await server.stop()
    return 0
