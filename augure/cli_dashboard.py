"""`augure dashboard`: the web dashboard on its own, while no bot runs on this home.

While `augure run` holds the home, approvals must be decided by its gate (the process whose
tool calls wait for them), so this command refuses and names `[dashboard] enabled`, which
serves the dashboard from inside the bot instead.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

from augure.config import Config
from augure.errors import UsageError


def add_parser(commands: Any) -> None:
    dashboard = commands.add_parser(
        "dashboard", help="serve the web dashboard and print a one-time login URL"
    )
    dashboard.add_argument("--host", help="address to bind (default [dashboard] host, 127.0.0.1)")
    dashboard.add_argument("--port", type=int, help="TCP port (default [dashboard] port, 8765)")


async def dashboard(config: Config, args: argparse.Namespace) -> int:
    from augure.app import Core
    from augure.dashboard.server import Dashboard
    from augure.home import holder

    running = holder(config.home)
    if running is not None:
        raise UsageError(
            f"a bot is running on {config.home} (pid {running.pid}); approvals must go through "
            "it: set [dashboard] enabled = true in augure.toml and restart it, then send "
            "/dashboard to the bot for a login link"
        )
    server = Dashboard(config.dashboard, args.host, args.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    # The core without Telegram and without the scheduler loop: the pages read and decide;
    # "run now" and pauses are recorded and take effect when the bot runs.
    core = await Core.open(config, approvers=[server])
    try:
        # What a stopped bot left pending will never run: rejected as a bot's start does, so
        # no press here "approves" a call that no process is waiting to make.
        await core.gate.reject_stale()
        await server.start(core)
        await stop.wait()
    finally:
        await server.stop()
        await core.close()
    return 0
