"""`augure run` with the test tools added: `python -m tests.e2e.launcher` (environment as usual)."""

from __future__ import annotations

import asyncio
import signal

from augure.channels.telegram.bot import serve
from augure.config.settings import load_config
from tests.e2e.tools import TEST_TOOLS


async def main() -> None:
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    await serve(load_config(), stop, TEST_TOOLS)


if __name__ == "__main__":
    asyncio.run(main())
