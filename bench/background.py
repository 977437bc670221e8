"""The next message answered while 5 background jobs run, against the same chat without them.

A real `augure run` (with the test tools) behind the fakes, instant model. First TURNS plain
messages are timed (injected message → its sendMessage); then one turn releases five
`slow_job` calls with `background: true` (each works for a minute), and once all five run,
the same TURNS messages are timed again in the same chat. docs/reference/execution.md / issue 16:
the chat stays responsive, so the two should match within the usual turn overhead.

Run: `python -m bench.background` from the repository root.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import environment, quantile, report, spawn, stop
from tests.e2e.conftest import OWNER
from tests.fakes.openai import FakeOpenAI, Reply, ToolCall, text
from tests.fakes.telegram import FakeTelegram

TURNS = 40
JOBS = 5
START = "start the jobs"


def model(request: dict[str, Any]) -> Reply:
    last = request["messages"][-1]
    if last["role"] == "tool":
        return text("Started them.")
    if last["role"] == "user" and last["content"] == START:
        calls = [ToolCall("slow_job", {"name": f"job{n}", "background": True}) for n in range(JOBS)]
        return Reply(tool_calls=calls)
    return text("ok")


async def timed(telegram: FakeTelegram, label: str) -> list[float]:
    latencies = []
    for index in range(TURNS):
        before = len(telegram.sent("sendMessage"))
        injected = time.monotonic()
        telegram.inject_message(OWNER, f"{label} {index}")
        calls = await telegram.wait_for("sendMessage", count=before + 1, timeout=20)
        latencies.append(calls[-1].at - injected)
    return latencies


def running(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT count(*) FROM tasks WHERE status = 'running' "
                                      "AND invocation IS NOT NULL").fetchone()[0])  # fmt: skip


async def measure(home: Path) -> tuple[list[float], list[float]]:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.responder = model
        process = await spawn(environment(home, telegram, llm), "tests.e2e.launcher")
        try:
            await telegram.wait_polling(timeout=20)
            telegram.inject_message(OWNER, "warm up")
            await telegram.wait_for("sendMessage", timeout=20)
            alone = await timed(telegram, "alone")
            before = len(telegram.sent("sendMessage"))
            telegram.inject_message(OWNER, START)
            await telegram.wait_for("sendMessage", count=before + 1, timeout=20)
            for _ in range(400):
                if running(home / "state.db") == JOBS:
                    break
                await asyncio.sleep(0.05)
            else:
                raise RuntimeError("the background jobs never started")
            beside = await timed(telegram, "beside")
            assert running(home / "state.db") == JOBS, "a job ended while measuring"
        finally:
            await stop(process)
    return alone, beside


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        alone, beside = await measure(Path(directory))
    figures = {
        "turn p50, no background work": (statistics.median(alone) * 1000, "ms"),
        "turn p95, no background work": (quantile(alone, 0.95) * 1000, "ms"),
        f"turn p50 while {JOBS} background jobs run": (statistics.median(beside) * 1000, "ms"),
        f"turn p95 while {JOBS} background jobs run": (quantile(beside, 0.95) * 1000, "ms"),
    }
    report("background", figures)
    print(f"({TURNS} messages each, same chat; injected message to its sendMessage)")


if __name__ == "__main__":
    asyncio.run(main())
