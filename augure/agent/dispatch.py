"""The tool calls of one model response: started as soon as each is complete in the stream.

With streaming on, `LLM.complete` hands each call over the moment its arguments are whole
(`start`), and it runs while the model is still writing the rest of its answer. Once the
answer is in, `results` awaits those and runs the calls that were not started early (a
non-streamed answer's, or one whose arguments never parsed), all concurrently (each through
`Executor.run`, whose lock keeps writes one at a time), and gives the results in the model's
order.

No call outlives its turn: an error before the results are read lets the started calls
finish (the model chose them, and each may already be with the owner for approval; their
records end completed or failed, not dangling), a cancelled turn cancels them.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

from augure.llm.client import ToolCallRequest
from augure.tools.base import RunContext, ToolResult
from augure.tools.executor import Executor


class Dispatch:
    def __init__(self, executor: Executor, ctx: RunContext) -> None:
        self.executor = executor
        self.ctx = ctx
        self._started: list[tuple[ToolCallRequest, asyncio.Task[ToolResult]]] = []

    def start(self, call: ToolCallRequest) -> None:
        """Run `call` now (its arguments as they are: complete)."""
        run = self.executor.run(call.name, call.arguments, self.ctx)
        self._started.append((call, asyncio.create_task(run, name=f"tool {call.name}")))

    async def results(self, calls: list[ToolCallRequest]) -> list[ToolResult]:
        """Every call's result, in the order of `calls`."""
        running = [self._task(call) for call in calls]
        self._started = []  # from here, gather owns them (and cancels them with itself)
        return list(await asyncio.gather(*running))

    async def settle(self) -> None:
        """Wait for the calls already started (the response failed before its results)."""
        started, self._started = self._started, []
        await asyncio.gather(*(task for _, task in started), return_exceptions=True)

    async def cancel(self) -> None:
        started, self._started = self._started, []
        for _, task in started:
            task.cancel()
        await asyncio.gather(*(task for _, task in started), return_exceptions=True)

    def _task(self, call: ToolCallRequest) -> asyncio.Task[ToolResult]:
        for early, task in self._started:
            if early is call:
                return task
        return asyncio.create_task(self.executor.run(call.name, call.arguments, self.ctx))

    async def __aenter__(self) -> Dispatch:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if isinstance(error, Exception):
            await self.settle()
        else:  # cancelled (or a clean exit, where nothing is left)
            await self.cancel()
