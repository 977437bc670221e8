"""Orchestration's two latency figures (issue 16), through the real agent and executor.

- Streaming dispatch: the scripted OpenAI-compatible server streams a 1 s answer whose first
  tool call is complete at 0.1 s (the second at 1.0 s); printed: when that first tool started,
  counted from the answer's first byte (target ≤ 0.15 s), beside when the answer ended.
- Batch: one `batch` of 25 read-only calls that take 1 s each, through the executor as a
  model's call runs (validation, policy, audit records); printed: the wall time (target
  ≤ 1.3 s).

Run: `python -m bench.orchestration` from the repository root. Each figure is the median of
RUNS runs.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from augure.config.settings import load_config
from augure.core.app import Core
from augure.core.lifespan import Augure
from augure.tools.base import Egress, RunContext, tool
from tests.fakes.openai import FakeOpenAI, Reply, ToolCall, text

RUNS = 5
FIRST_COMPLETE = 0.1  # s into the answer when the first call's arguments are whole
ANSWER_LENGTH = 1.0  # s the whole answer takes to stream
BATCH_SIZE = 25
CALL_SECONDS = 1.0

STARTED: list[float] = []


@tool("bench_stamp", egress=Egress.READ_ONLY)
async def bench_stamp(ctx: RunContext, name: str) -> str:
    """Note when the call started."""
    STARTED.append(time.monotonic())
    return name


@tool("bench_wait", egress=Egress.READ_ONLY)
async def bench_wait(ctx: RunContext, n: int) -> str:
    """A read-only call that takes a second."""
    await asyncio.sleep(CALL_SECONDS)
    return f"waited {n}"


class Quiet:
    """A streaming channel that shows nothing: the turn streams as in Telegram."""

    async def text(self, delta: str) -> None:
        return None

    async def restart(self) -> None:
        return None


async def streaming_dispatch(core: Core, llm: FakeOpenAI) -> tuple[float, float]:
    """(first tool's start, answer's end), in seconds from the answer's first byte."""
    STARTED.clear()
    llm.script(
        Reply(
            tool_calls=[
                ToolCall("bench_stamp", {"name": "first"}, pause=FIRST_COMPLETE),
                ToolCall("bench_stamp", {"name": "second"}, pause=ANSWER_LENGTH - FIRST_COMPLETE),
            ]
        ),
        text("Done."),
    )
    await core.agent.handle("bench", "stamp twice", stream=Quiet())
    began, ended = llm.streams[-2]  # the answer with the calls; the last one is "Done."
    return STARTED[0] - began, ended - began


async def batch_wall_time(core: Core) -> float:
    calls = [{"tool": "bench_wait", "arguments": {"n": n}} for n in range(BATCH_SIZE)]
    began = time.monotonic()
    result = await core.executor.run("batch", {"calls": calls}, core.context)
    elapsed = time.monotonic() - began
    assert result.success and result.content.count("waited") == BATCH_SIZE, result.content
    return elapsed


async def main() -> None:
    async with FakeOpenAI() as llm:
        with tempfile.TemporaryDirectory() as directory:
            os.environ.update(OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY="bench")
            config = load_config(home=Path(directory))
            async with Augure.opened(config, extra_tools=[bench_stamp, bench_wait]) as opened:
                core = opened.core
                starts, ends, walls = [], [], []
                for _ in range(RUNS):
                    start, end = await streaming_dispatch(core, llm)
                    starts.append(start)
                    ends.append(end)
                    walls.append(await batch_wall_time(core))
    print(
        f"streaming dispatch: first tool started {statistics.median(starts):.3f} s into the "
        f"answer (its call complete at {FIRST_COMPLETE:.1f} s; target ≤ 0.15 s); "
        f"the answer ended at {statistics.median(ends):.3f} s"
    )
    print(
        f"batch of {BATCH_SIZE} read-only {CALL_SECONDS:g} s calls: "
        f"{statistics.median(walls):.3f} s wall time (target ≤ 1.3 s)"
    )


if __name__ == "__main__":
    asyncio.run(main())
