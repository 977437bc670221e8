"""A long conversation: does memory or turn latency creep up as the history grows?

Run: `python -m bench.soak` from the repository root, after `pip install -e '.[dev]'`.
One chat sends TURNS messages one after another to a real `augure run` (instant model,
default `[agent] history_tokens`, so compaction happens as it would). Prints the median turn
latency (message injected → answer delivered) and the bot's own CPU time per turn for each
window of WINDOW turns, with the number of messages the window's last model request carried
(the history, bounded by compaction); then the first and last window's figures, the first
turn and the slowest later one, the whole process tree's RSS after the first and the last
window, and how many times the history was summarised.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from augure.agent.history import SUMMARY_PROMPT
from bench.common import cpu_seconds, environment, report, spawn, stop, tree_rss_mb
from tests.e2e.conftest import OWNER
from tests.fakes.openai import FakeOpenAI, Reply, text
from tests.fakes.telegram import FakeTelegram

TURNS = 2000
WINDOW = 100


async def soak(home: Path) -> dict[str, tuple[float, str]]:
    summaries = 0

    def respond(request: dict[str, Any]) -> Reply:
        nonlocal summaries
        if request["messages"][0]["content"] == SUMMARY_PROMPT:
            summaries += 1
            return text("The owner sent numbered messages; each was acknowledged.")
        return text("ok")

    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.responder = respond
        process = await spawn(environment(home, telegram, llm))
        await telegram.wait_polling(timeout=20)
        await telegram.wait_for("setMyCommands", timeout=20)
        latencies: list[float] = []
        rss: list[float] = []
        cpu: list[float] = []  # the bot's own CPU time per turn, by window
        sizes: list[int] = []  # messages in the window's last model request
        used = 0.0
        for index in range(TURNS):
            sent = len(telegram.sent("sendMessage"))
            injected = time.monotonic()
            telegram.inject_message(OWNER, f"message number {index}")
            calls = await telegram.wait_for("sendMessage", count=sent + 1, timeout=30)
            latencies.append(calls[-1].at - injected)
            if index == 0:  # the first turn waits for the SDK's import: not counted
                used = cpu_seconds(process.pid)
            if (index + 1) % WINDOW == 0:
                rss.append(tree_rss_mb(process.pid))
                used, before = cpu_seconds(process.pid), used
                cpu.append((used - before) / (WINDOW - 1 if index < WINDOW else WINDOW) * 1000)
                sizes.append(len(llm.requests[-1]["messages"]))
                llm.requests.clear()
                # The fake keeps every call: drop them so the bench's own bookkeeping stays
                # flat and only the bot's cost is seen growing (or not).
                telegram.calls.clear()
        await stop(process)
    windows = [latencies[start : start + WINDOW] for start in range(0, TURNS, WINDOW)]
    medians = [statistics.median(window) * 1000 for window in windows]
    print(f"{TURNS} turns in one chat, instant model; by window of {WINDOW} turns:")
    print("  turn latency p50 (ms):  " + " ".join(f"{value:.1f}" for value in medians))
    print("  bot CPU per turn (ms):  " + " ".join(f"{value:.1f}" for value in cpu))
    print("  messages sent (last):   " + " ".join(str(size) for size in sizes))
    return {
        f"turn latency p50, turns 1-{WINDOW}": (medians[0], "ms"),
        f"turn latency p50, turns {TURNS - WINDOW + 1}-{TURNS}": (medians[-1], "ms"),
        f"bot CPU per turn, turns 1-{WINDOW}": (cpu[0], "ms"),
        f"bot CPU per turn, turns {TURNS - WINDOW + 1}-{TURNS}": (cpu[-1], "ms"),
        # `[agent] history_tokens` bounds what a turn carries; beyond the bound, latency
        # and CPU should stay where they are.
        "history messages in the last request": (sizes[-1], ""),
        "largest history sent (messages)": (max(sizes), ""),
        # The first turn may wait for the openai SDK's import (right after start-up).
        "first turn": (latencies[0] * 1000, "ms"),
        "slowest later turn (compacting turns include a summary call)": (
            max(latencies[1:]) * 1000,
            "ms",
        ),
        f"RSS of the process tree after {WINDOW} turns": (rss[0], "MB"),
        f"RSS of the process tree after {TURNS} turns": (rss[-1], "MB"),
        "RSS growth, first to last window": (rss[-1] - rss[0], "MB"),
        "RSS range over all windows": (max(rss) - min(rss), "MB"),
        "history summaries": (summaries, ""),
    }


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        figures = await soak(Path(directory) / "home")
    report("soak", figures)


if __name__ == "__main__":
    asyncio.run(main())
