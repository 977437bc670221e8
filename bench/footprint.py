"""What a real `augure run` costs the machine: start-up time, idle memory, CPU per turn.

Run: `python -m bench.footprint` from the repository root, after `pip install -e '.[dev]'`
(`AUGURE_BENCH_PYTHON=/venv/bin/python` runs the bot under another interpreter, e.g. a plain
`pip install .` without extras). Prints:
- start-up: spawning `augure run` to its first getUpdates, median and max of STARTS;
- the bot's own CPU time (user + system, psutil) per simple turn (one message, an instant
  model, one answer), over TURNS turns: the bench's fakes run in this process, not the bot's;
- idle RSS of the whole process tree after those turns (both the median of BOTS bots);
- what the openai SDK costs by itself (RSS and CPU of `import openai` in a bare interpreter),
  and what its client, built as the bot builds it, adds to what `augure run` imports before
  its first poll: the part of the idle RSS that no change to Augure can remove while it
  uses the SDK.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import (
    BOT_PYTHON,
    cpu_seconds,
    environment,
    report,
    spawn,
    stop,
    tree_rss_mb,
)
from tests.e2e.conftest import OWNER
from tests.fakes.openai import FakeOpenAI, text
from tests.fakes.telegram import FakeTelegram

STARTS = 5
TURNS = 200
BOTS = 3


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


BOT_IMPORTS = "import augure.cli.main, augure.core.app, augure.channels.telegram.bot"
# The model client as the bot builds it (augure/llm/client.py: the SDK, without what it never uses).
BOT_CLIENT = (
    "from augure.config.llm import LLMConfig; from augure.llm.client import LLM; "
    "LLM(LLMConfig(base_url='http://127.0.0.1:9/v1')).client"
)
PROBE = """
import json, resource, time
began = time.process_time()
{imports}
cpu = time.process_time() - began
with open("/proc/self/statm") as statm:
    rss = int(statm.read().split()[1]) * resource.getpagesize()
print(json.dumps([rss / 1024 / 1024, cpu * 1000]))
"""


def imported(imports: str) -> tuple[float, float]:
    """RSS (MB) and CPU (ms) of a fresh interpreter after `imports`, best of three."""
    runs = []
    for _ in range(3):
        probe = PROBE.format(imports=imports)
        output = subprocess.run(
            [BOT_PYTHON, "-c", probe], capture_output=True, text=True, check=True
        ).stdout
        runs.append(json.loads(output))
    return min(rss for rss, _ in runs), min(cpu for _, cpu in runs)


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory) / "home"
        starts = await startup(home)
        # One bot process can be up to a quarter faster or slower than the next for the
        # whole of its life (same commit: 4.9 and 6.25 ms a turn): the median of BOTS.
        runs = [await turns(home) for _ in range(BOTS)]
    cpu = statistics.median(cpu for cpu, _ in runs)
    rss = statistics.median(rss for _, rss in runs)
    bare_rss, _ = imported("pass")
    sdk_rss, sdk_cpu = imported("import openai")
    bot_rss, bot_cpu = imported(BOT_IMPORTS)
    both_rss, _ = imported(f"{BOT_IMPORTS}; {BOT_CLIENT}")
    report(
        "footprint",
        {
            f"startup to first getUpdates, median of {STARTS}": (
                statistics.median(starts) * 1000,
                "ms",
            ),
            f"startup to first getUpdates, max of {STARTS}": (max(starts) * 1000, "ms"),
            f"bot CPU per simple turn, over {TURNS} turns, median of {BOTS} bots": (cpu, "ms"),
            f"idle RSS of the process tree after {TURNS + 1} turns, median of {BOTS}": (rss, "MB"),
            "bare interpreter RSS": (bare_rss, "MB"),
            "RSS after augure run's imports (no openai)": (bot_rss, "MB"),
            "CPU of augure run's imports (no openai)": (bot_cpu, "ms"),
            "RSS after `import openai` alone": (sdk_rss, "MB"),
            "CPU of `import openai` alone": (sdk_cpu, "ms"),
            "RSS the openai client adds to augure run's imports": (both_rss - bot_rss, "MB"),
        },
    )


if __name__ == "__main__":
    asyncio.run(main())
