"""What every HTTP fake shares: an aiohttp app on 127.0.0.1, started and stopped one way.

A fake subclasses `FakeServer`, builds its routes in `build_app` and says in `_started` what
its clients need to know of the address (``base_url``, ``root``)::

    class FakeThing(FakeServer):
        runner_options = {"handler_cancellation": True}

        def build_app(self) -> web.Application: ...

    async with FakeThing() as fake:          # a free port, for tests
        ...
    await FakeThing().start(port=8081)       # a fixed one, for a person (`serve`)

A fake started again after `stop` comes back on the port it had, so a client configured with
its address finds it: that is how a test plays a restart. `serve` runs a fake from the
command line until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, Self

from aiohttp import web

HOST = "127.0.0.1"


class FakeServer:
    # Passed to aiohttp's AppRunner; `access_log` off keeps test output readable.
    runner_options: ClassVar[dict[str, Any]] = {}

    # Class-level defaults rather than an __init__, so a dataclass fake can subclass this.
    port: int | None = None
    _runner: web.AppRunner | None = None
    _site: web.TCPSite | None = None

    def build_app(self) -> web.Application:
        raise NotImplementedError

    def _started(self) -> None:
        """Called once listening: record the address clients are given."""

    def _stopping(self) -> None:
        """Called before the server closes: wake handlers that wait, so stopping is quick."""

    async def start(self, port: int | None = None) -> None:
        if port is not None:
            self.port = port
        self._runner = web.AppRunner(self.build_app(), access_log=None, **self.runner_options)
        await self._runner.setup()
        await self.listen()
        self.port = self._runner.addresses[0][1]
        self._started()

    async def stop(self) -> None:
        self._stopping()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            self._site = None

    async def listen(self) -> None:
        """Accept connections again (after `unlisten`), on the same address."""
        if self._site is None and self._runner is not None:
            self._site = web.TCPSite(self._runner, HOST, self.port or 0)
            await self._site.start()

    async def unlisten(self) -> None:
        """Refuse new connections while the app and its state stay."""
        if self._site is not None:
            await self._site.stop()
            self._site = None

    @property
    def origin(self) -> str:
        if self.port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return f"http://{HOST}:{self.port}"

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def serve(
    fake: FakeServer, port: int, console: Callable[[], Coroutine[Any, Any, None]] | None = None
) -> None:
    """Run `fake` on `port` until SIGINT or SIGTERM; `console` (reading stdin, say) runs
    beside it and its end does not stop the server: stdin may well be /dev/null."""
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopped.set)
    await fake.start(port)
    side = asyncio.create_task(console()) if console is not None else None
    try:
        await stopped.wait()
    finally:
        if side is not None:
            side.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await side
        await fake.stop()
