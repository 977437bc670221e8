"""What a real `augure run` costs the machine: start-up time, idle memory, CPU per turn.

Run: `python -m bench.footprint` from the repository root, after `pip install -e '.[dev]'`
(`AUGURE_BENCH_PYTHON=/venv/bin/python` runs the bot under another interpreter, e.g. a plain
`pip install .` without extras). Prints:
- start-up: spawning `augure run` to its first getUpdates, median and max of STARTS;
- the bot's own CPU time (user + system, psutil) per simple turn (one message, an instant
  model, one answer), over TURNS turns: the bench's fakes run in this process, not the bot's;
- idle RSS of the whole process tree after those turns.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import cpu_seconds, environment, report, spawn, stop, tree_rss_mb
from tests.e2e.conftest import OWNER
from tests.fakes.openai import FakeOpenAI, text
from tests.fakes.telegram import FakeTelegram

STARTS = 5
TURNS = 200


async def startup(home: Path) -> list[float]:
    times = []
    for _ in range(STARTS + 1):  # the first start writes the bytecode cache: not counted
        async with FakeTelegram() as telegram, FakeOpenAI() as llm:
            began = time.monotonic()
            process = await spawn(environment(home, telegram, llm))
            times.append(await telegram.wait_polling(timeout=20) - began)
            await stop(process)
    return times[1:]


async def turns(home: Path) -> tuple[float, float]:
    """CPU milliseconds per turn, then the tree's idle RSS in MB."""
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.responder = lambda request: text("ok")
        process = await spawn(environment(home, telegram, llm))
        await telegram.wait_polling(timeout=20)
        await telegram.wait_for("setMyCommands", timeout=20)
        telegram.inject_message(OWNER, "warm up")
        await telegram.wait_for("sendMessage", timeout=20)
        await telegram.wait_idle(quiet=0.5)
        used_before = cpu_seconds(process.pid)
        for index in range(TURNS):
            sent = len(telegram.sent("sendMessage"))
            telegram.inject_message(OWNER, f"message {index}")
            await telegram.wait_for("sendMessage", count=sent + 1, timeout=20)
        await telegram.wait_idle(quiet=0.3)
        per_turn = (cpu_seconds(process.pid) - used_before) / TURNS * 1000
        await asyncio.sleep(2.0)  # let the process settle before reading its memory
        rss = tree_rss_mb(process.pid)
        await stop(process)
    return per_turn, rss


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory) / "home"
        starts = await startup(home)
        cpu, rss = await turns(home)
    report(
        "footprint",
        {
            f"startup to first getUpdates, median of {STARTS}": (
                statistics.median(starts) * 1000,
                "ms",
            ),
            f"startup to first getUpdates, max of {STARTS}": (max(starts) * 1000, "ms"),
            f"bot CPU per simple turn, over {TURNS} turns": (cpu, "ms"),
            f"idle RSS of the process tree after {TURNS + 1} turns": (rss, "MB"),
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
