"""A step run again and again in the background while the bot runs, never stopped by its own
failure (the forget-request watcher, the recall indexer)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class Repeating:
    """`step` every `every` seconds from `start` until `stop`; a failing step is logged as
    `failure` says and waits `backoff` seconds more before the next."""

    def __init__(
        self,
        name: str,
        step: Callable[[], Awaitable[object]],
        every: float,
        *,
        failure: Callable[[Exception], None],
        backoff: float = 0.0,
    ) -> None:
        self.name, self.step, self.every = name, step, every
        self.failure, self.backoff = failure, backoff
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.failure(exc)
                await asyncio.sleep(self.backoff)
            await asyncio.sleep(self.every)
