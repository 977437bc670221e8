"""How soon a message is answered: a real `augure run` beside the floor, behind the same fakes.

Run: `python -m bench.latency` from the repository root, after `pip install -e '.[dev]'`
(`--check`: only the lone message, and exit 1 if it waited for a window: CI runs it).
Prints, for `augure run` with its shipped settings and an instant model:
- a lone message (the chat idle): inject → model request and inject → reply, median of LONE;
- a burst of three sent at once: inject → first model request, inject → the answer that
  covers all three, and the model calls per burst, median of BURSTS;
- a message arriving mid-turn (the model takes MODEL_SECONDS over the chat's previous
  message): inject → the model request that carries it, inject → its answer, median of MID;
- start-up to the first getUpdates (median of STARTS), restarting in a home an earlier start
  made (what every start after the first costs) and starting in a fresh one (the store's
  schema made, the bundled skills installed: once per install); the bot's CPU per simple turn
  over TURNS turns, and the idle RSS of its process tree after them, restarted in that home,
  and the RSS again for a first run in a fresh home;
- the same for the floor (`bench.floor_bot`: bare python-telegram-bot + openai SDK), and the
  ratio of each of Augure's figures to the floor's, measured in this one run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from augure.channels.telegram.fold import ALBUM_SECONDS
from bench.common import cpu_seconds, environment, report, spawn, stop, this_turn, tree_rss_mb
from tests.e2e.conftest import OWNER
from tests.fakes.openai import FakeOpenAI, Reply, text
from tests.fakes.telegram import FakeTelegram

LONE = 30
BURSTS = 10
MID = 10
TURNS = 100
STARTS = 5
MODEL_SECONDS = 0.3  # the model's time on the message a mid-turn one arrives during
FLOOR = "bench.floor_bot"
AUGURE = "augure"
HOMES = tempfile.gettempdir()  # set to the run's own temporary folder


@dataclass
class Model:
    """The fake model's side: when each request arrived and the owner's words it carried."""

    asked: list[tuple[float, list[str]]] = field(default_factory=list)
    slow: set[str] = field(default_factory=set)  # words the model takes MODEL_SECONDS over

    def answer(self, request: dict[str, Any]) -> Reply:
        words = this_turn(request) or [str(request["messages"][-1]["content"])]
        self.asked.append((time.monotonic(), words))
        delay = MODEL_SECONDS if self.slow.intersection(words) else 0.0
        return text("echo " + " ".join(words), delay=delay)

    def asked_for(self, word: str) -> float:
        return next(at for at, words in self.asked if word in words)


def shipped(telegram: FakeTelegram, llm: FakeOpenAI) -> dict[str, str]:
    """The bot's environment in a fresh home under the run's temporary folder, with the
    shipped `fold_seconds` (whatever a test harness sets)."""
    env = environment(Path(tempfile.mkdtemp(dir=HOMES)), telegram, llm)
    env.pop("AUGURE__TELEGRAM__FOLD_SECONDS", None)
    return env


async def started(
    telegram: FakeTelegram, llm: FakeOpenAI, bot: str, home: str | None = None
) -> asyncio.subprocess.Process:
    """The bot, polling, in `home` (a fresh one if None)."""
    env = shipped(telegram, llm)
    if home is not None:
        env["AUGURE_HOME"] = home
    process = await spawn(env, *(() if bot == AUGURE else (bot,)))
    await telegram.wait_polling(timeout=30)
    if bot == AUGURE:
        await telegram.wait_for("setMyCommands", timeout=30)
    return process


async def answered(telegram: FakeTelegram, word: str) -> float:
    """When the bot first sent an answer carrying `word`."""
    (call,) = await telegram.wait_for(
        lambda c: (
            c.method in ("sendMessage", "editMessageText")
            and word in str(c.params.get("text", "")).split()
        ),
        timeout=30,
    )
    return call.at


async def lone(telegram: FakeTelegram, model: Model, runs: int) -> tuple[list[float], list[float]]:
    """Seconds from inject to model request, and to reply, per message."""
    to_request, to_reply = [], []
    for n in range(runs):
        word = f"lone{n}"
        injected = time.monotonic()
        telegram.inject_message(OWNER, word)
        replied = await answered(telegram, word)
        to_request.append(model.asked_for(word) - injected)
        to_reply.append(replied - injected)
        await telegram.wait_idle(quiet=0.1, timeout=30)
    return to_request, to_reply


async def bursts(telegram: FakeTelegram, model: Model) -> tuple[list[float], ...]:
    to_request: list[float] = []
    to_reply: list[float] = []
    calls: list[float] = []
    for n in range(BURSTS):
        words = [f"burst{n}x{k}" for k in range(3)]
        asked = len(model.asked)
        injected = time.monotonic()
        for word in words:
            telegram.inject_message(OWNER, word)
        replies = [await answered(telegram, word) for word in words]
        await telegram.wait_idle(quiet=0.1, timeout=30)
        to_request.append(model.asked_for(words[0]) - injected)
        to_reply.append(max(replies) - injected)
        calls.append(len(model.asked) - asked)
    return to_request, to_reply, calls


async def mid_turn(telegram: FakeTelegram, model: Model) -> tuple[list[float], list[float]]:
    to_request, to_reply = [], []
    for n in range(MID):
        first, later = f"slow{n}", f"meanwhile{n}"
        model.slow.add(first)
        asked = len(model.asked)
        telegram.inject_message(OWNER, first)
        while len(model.asked) == asked:
            await asyncio.sleep(0.005)
        injected = time.monotonic()
        telegram.inject_message(OWNER, later)
        replied = await answered(telegram, later)
        await telegram.wait_idle(quiet=0.1, timeout=30)
        to_request.append(model.asked_for(later) - injected)
        to_reply.append(replied - injected)
    return to_request, to_reply


async def start_time(bot: str, home: str | None = None) -> float:
    """Seconds from spawning the bot to its first getUpdates, in `home` (a fresh one if None)."""
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = shipped(telegram, llm)
        if home is not None:
            env["AUGURE_HOME"] = home
        began = time.monotonic()
        process = await spawn(env, *(() if bot == AUGURE else (bot,)))
        took = await telegram.wait_polling(timeout=30) - began
        await stop(process)
    return took


async def footprint(bot: str) -> dict[str, float]:
    """CPU ms per turn, then idle RSS (MB); start-up (ms) measured apart: a restart in a home
    an earlier start made (what every restart after the first costs), and a first start in a
    fresh home (the store's schema made: once per install)."""
    home = tempfile.mkdtemp(dir=HOMES)
    await start_time(bot, home)  # writes the bytecode cache and makes the home: not counted
    restarts = [await start_time(bot, home) for _ in range(STARTS)]
    first_starts = [await start_time(bot) for _ in range(STARTS)]
    cpu, rss = await turns(bot, home)
    _, first_rss = await turns(bot, None)
    return {
        "cpu": cpu,
        "rss": rss,
        "first rss": first_rss,
        "start": statistics.median(restarts) * 1000,
        "first start": statistics.median(first_starts) * 1000,
    }


async def turns(bot: str, home: str | None) -> tuple[float, float]:
    """The bot's CPU ms per simple turn over TURNS turns in `home` (fresh if None), then its
    process tree's idle RSS (MB)."""
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        model = Model()
        llm.responder = model.answer
        process = await started(telegram, llm, bot, home)
        await lone(telegram, model, 1)  # warm up
        used = cpu_seconds(process.pid)
        for n in range(TURNS):
            telegram.inject_message(OWNER, f"turn{n}")
            await answered(telegram, f"turn{n}")
        await telegram.wait_idle(quiet=0.3, timeout=30)
        cpu = (cpu_seconds(process.pid) - used) / TURNS * 1000
        await asyncio.sleep(2.0)  # let the process settle before reading its memory
        rss = tree_rss_mb(process.pid)
        await stop(process)
    return cpu, rss


async def timings(bot: str, *, only_lone: bool = False) -> dict[str, Any]:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        model = Model()
        llm.responder = model.answer
        process = await started(telegram, llm, bot)
        await lone(telegram, model, 1)  # warm up
        figures: dict[str, Any] = {"lone": await lone(telegram, model, LONE)}
        if not only_lone:
            figures["burst"] = await bursts(telegram, model)
            figures["mid"] = await mid_turn(telegram, model)
        await stop(process)
    return figures


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def check() -> int:
    """CI: a lone message must reach the model without waiting for any of the folder's
    timers (the shortest is an album's gap)."""
    to_request, _ = (await timings(AUGURE, only_lone=True))["lone"]
    waited = ms(to_request)
    print(f"lone message, inject → model request: median {waited:.1f} ms over {LONE}")
    if waited >= ALBUM_SECONDS * 1000:
        print(f"FAIL: a lone message waited for a window ({ALBUM_SECONDS * 1000:.0f} ms or more)")
        return 1
    return 0


async def main() -> None:
    augure = await timings(AUGURE)
    floor = await timings(FLOOR, only_lone=True)
    augure_cost, floor_cost = await footprint(AUGURE), await footprint(FLOOR)
    lone_request, lone_reply = augure["lone"]
    burst_request, burst_reply, burst_calls = augure["burst"]
    mid_request, mid_reply = augure["mid"]
    floor_request, floor_reply = floor["lone"]
    report(
        "latency",
        {
            f"lone message, inject → model request, median of {LONE}": (ms(lone_request), "ms"),
            f"lone message, inject → reply, median of {LONE}": (ms(lone_reply), "ms"),
            f"burst of 3, inject → first model request, median of {BURSTS}": (
                ms(burst_request),
                "ms",
            ),
            f"burst of 3, inject → all three answered, median of {BURSTS}": (
                ms(burst_reply),
                "ms",
            ),
            "burst of 3, model calls per burst": (statistics.mean(burst_calls), "calls"),
            f"mid-turn message ({MODEL_SECONDS * 1000:.0f} ms model), inject → its model "
            f"request, median of {MID}": (ms(mid_request), "ms"),
            f"mid-turn message, inject → its answer, median of {MID}": (ms(mid_reply), "ms"),
            f"bot CPU per simple turn, over {TURNS}": (augure_cost["cpu"], "ms"),
            f"start-up to first getUpdates, a restart, median of {STARTS}": (
                augure_cost["start"],
                "ms",
            ),
            f"start-up to first getUpdates, a fresh home, median of {STARTS}": (
                augure_cost["first start"],
                "ms",
            ),
            f"idle RSS of the process tree after {TURNS} turns, a restart": (
                augure_cost["rss"],
                "MB",
            ),
            f"idle RSS after {TURNS} turns, the first run in a fresh home": (
                augure_cost["first rss"],
                "MB",
            ),
            "floor: lone message, inject → model request": (ms(floor_request), "ms"),
            "floor: lone message, inject → reply": (ms(floor_reply), "ms"),
            "floor: CPU per turn": (floor_cost["cpu"], "ms"),
            "floor: start-up, a restart": (floor_cost["start"], "ms"),
            "floor: start-up, a fresh home": (floor_cost["first start"], "ms"),
            "floor: idle RSS": (floor_cost["rss"], "MB"),
            "floor: idle RSS, a fresh home": (floor_cost["first rss"], "MB"),
            "ratio to the floor: lone inject → reply (target ≤ 1.1)": (
                ms(lone_reply) / ms(floor_reply),
                "x",
            ),
            "ratio to the floor: CPU per turn (target ≤ 1.0)": (
                augure_cost["cpu"] / floor_cost["cpu"],
                "x",
            ),
            "ratio to the floor: start-up, a restart (target ≤ 0.5)": (
                augure_cost["start"] / floor_cost["start"],
                "x",
            ),
            "ratio to the floor: start-up, a fresh home": (
                augure_cost["first start"] / floor_cost["first start"],
                "x",
            ),
            "ratio to the floor: idle RSS, a fresh home": (
                augure_cost["first rss"] / floor_cost["first rss"],
                "x",
            ),
            "ratio to the floor: idle RSS, a restart (target ≤ 0.85)": (
                augure_cost["rss"] / floor_cost["rss"],
                "x",
            ),
        },
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as HOMES:
        if "--check" in sys.argv[1:]:
            sys.exit(asyncio.run(check()))
        asyncio.run(main())
