"""What the model is asked for, and how much of each request a provider could serve from cache.

Run: `python -m bench.spend` from the repository root, after `pip install -e '.[dev]'`.

1. Folded follow-ups (docs/telegram.md): a real `augure run` (default `fold_seconds`, 0: a
   lone message answered at once; then again with 1.0, for owners who type in bursts)
   behind the fakes. CHATS chats write PER_CHAT messages each, all at
   once, the way people write: after each message, a follow-up comes 0.2-0.8 s later with
   probability FOLLOW_UP_CHANCE, otherwise after a pause of 3-8 s (a seeded random, the
   same every run).
   The model takes MODEL_SECONDS per answer and echoes the messages it answers. Prints the
   model calls made, the messages answered (all, or the bench fails) and whether every
   chat's answers came in the order it wrote.
2. Cache-friendly requests (docs/prompt-economy.md): for each two consecutive requests of a
   chat in part 1, the bytes the later one shares at its start with the earlier one (tool
   list, then messages, as the SDK sends them), over all its bytes.
3. An idle day: the heartbeat on, every 30 minutes around the clock, an empty checklist; a
   simulated clock walks 24 hours of beats through the core. Prints the model calls: 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import tempfile
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench.common import environment, report, spawn, stop, this_turn
from tests.fakes.openai import FakeOpenAI, Reply, text
from tests.fakes.telegram import FakeTelegram

CHATS = 20
PER_CHAT = 10
FOLLOW_UP_CHANCE = 0.75
MODEL_SECONDS = 1.5
USERS = [7000 + n for n in range(CHATS)]
TARGET_CALLS = 60
TARGET_SHARE = 0.90
HEARTBEAT_MINUTES = 30


def echo(request: dict[str, Any]) -> Reply:
    return text("echo " + " ".join(this_turn(request)), delay=MODEL_SECONDS)


def gaps(seed: int) -> list[float]:
    chance = random.Random(seed)
    return [
        chance.uniform(0.2, 0.8) if chance.random() < FOLLOW_UP_CHANCE else chance.uniform(3, 8)
        for _ in range(PER_CHAT - 1)
    ]


async def write(telegram: FakeTelegram, user: int) -> None:
    for index, pause in enumerate([*gaps(user), 0.0]):
        telegram.inject_message(user, f"{user}-{index}")
        await asyncio.sleep(pause)


def echoed(telegram: FakeTelegram, user: int) -> list[str]:
    answers = [m["text"] for m in telegram.messages(user) if m["text"].startswith("echo ")]
    return [word for answer in answers for word in answer.split()[1:]]


async def folded(
    home: Path, fold_seconds: str | None = None
) -> tuple[list[dict[str, Any]], dict[int, list[str]]]:
    """The requests the model got and each chat's echoed words; `fold_seconds` unset: the
    default, as shipped."""
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.responder = echo
        env = environment(home, telegram, llm, USERS)
        env.pop("AUGURE__TELEGRAM__FOLD_SECONDS", None)
        if fold_seconds is not None:
            env["AUGURE__TELEGRAM__FOLD_SECONDS"] = fold_seconds
        env["AUGURE__TELEGRAM__STREAMING"] = "false"
        process = await spawn(env, "augure", "run")
        try:
            await telegram.wait_polling(timeout=20)
            await asyncio.gather(*(write(telegram, user) for user in USERS))
            for _ in range(600):
                if sum(len(echoed(telegram, user)) for user in USERS) >= CHATS * PER_CHAT:
                    break
                await asyncio.sleep(0.1)
            await telegram.wait_idle(quiet=1.0, timeout=30)
        finally:
            await stop(process)
        return list(llm.requests), {user: echoed(telegram, user) for user in USERS}


def as_sent(request: dict[str, Any]) -> str:
    """The part a provider caches, in the order it reads it: the tools, then the messages."""
    tools = json.dumps(request.get("tools", []), separators=(",", ":"), ensure_ascii=False)
    return tools + json.dumps(request["messages"], separators=(",", ":"), ensure_ascii=False)


def common_start(first: str, second: str) -> int:
    size = min(len(first), len(second))
    low, high = 0, size  # the longest shared start, by bisection over slices
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def prefix_share(requests: list[dict[str, Any]]) -> tuple[float, int, int]:
    """(shared bytes over all bytes of the later request, pairs, pairs whose system prompt
    and tools were identical)."""
    by_chat: defaultdict[str, list[str]] = defaultdict(list)
    stable: defaultdict[str, list[str]] = defaultdict(list)
    for request in requests:
        chat = this_turn(request)[0].split("-")[0]
        by_chat[chat].append(as_sent(request))
        stable[chat].append(json.dumps([request["messages"][0], request.get("tools", [])]))
    shared = total = pairs = same = 0
    for chat, sent in by_chat.items():
        for earlier, later in pairwise(sent):
            shared += common_start(earlier, later)
            total += len(later)
            pairs += 1
        same += sum(a == b for a, b in pairwise(stable[chat]))
    return (shared / total if total else 0.0), pairs, same


async def idle_day(home: Path) -> tuple[int, int]:
    """(model calls, beats) over 24 simulated hours of heartbeats with an empty checklist."""
    from augure.config.settings import load_config
    from augure.core.lifespan import Augure

    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.responder = echo
        saved = dict(os.environ)
        os.environ.update(environment(home, telegram, llm, USERS))
        os.environ["AUGURE__HEARTBEAT__ENABLED"] = "true"
        os.environ["AUGURE__HEARTBEAT__INTERVAL_MINUTES"] = str(HEARTBEAT_MINUTES)
        os.environ["AUGURE__HEARTBEAT__ACTIVE_HOURS"] = "00:00-23:59"
        try:
            config = load_config()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        config.memory_dir.mkdir(parents=True, exist_ok=True)
        # What a new owner's checklist looks like before they write anything in it.
        (config.memory_dir / config.heartbeat.checklist).write_text(
            "# Heartbeat checklist\n\n<!-- one line per thing to check -->\n- [ ]\n"
        )
        now = datetime(2026, 1, 5, tzinfo=UTC)
        async with Augure.opened(config) as opened:
            heartbeat = opened.core.heartbeat
            heartbeat.clock = lambda: now
            beats = 24 * 60 // HEARTBEAT_MINUTES
            for _ in range(beats):
                now += timedelta(minutes=HEARTBEAT_MINUTES)
                await heartbeat.beat()
        return len(llm.requests), beats


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        requests, answers = await folded(Path(directory) / "folded")
        windowed, _ = await folded(Path(directory) / "windowed", "1.0")
        idle_calls, beats = await idle_day(Path(directory) / "idle")
    answered = sum(len(words) for words in answers.values())
    in_order = sum(words == [f"{u}-{n}" for n in range(PER_CHAT)] for u, words in answers.items())
    share, pairs, same = prefix_share(requests)
    messages = CHATS * PER_CHAT
    print(
        f"{CHATS} chats x {PER_CHAT} messages in bursts (a follow-up within 0.2-0.8 s with "
        f"probability {FOLLOW_UP_CHANCE}, else 3-8 s later), model {MODEL_SECONDS} s a call"
    )
    report(
        "spend",
        {
            f"model calls for {messages} messages, shipped settings (fold_seconds 0)": (
                len(requests),
                "calls",
            ),
            "the same with fold_seconds = 1.0 (every message waits 1 s for the next)": (
                len(windowed),
                "calls",
            ),
            f"messages answered of {messages}": (answered, ""),
            f"chats answered in order of {CHATS}": (in_order, ""),
            "byte-identical prefix of consecutive requests": (share * 100, "%"),
            f"consecutive pairs with the same system prompt and tools, of {pairs}": (same, ""),
            f"model calls in an idle day ({beats} heartbeats, empty checklist)": (idle_calls, ""),
        },
    )
    verdicts = [
        ("calls, shipped settings", len(requests) <= TARGET_CALLS, f"<= {TARGET_CALLS}"),
        ("calls, fold_seconds = 1.0", len(windowed) <= TARGET_CALLS, f"<= {TARGET_CALLS}"),
        ("prefix share", share >= TARGET_SHARE, f">= {TARGET_SHARE:.0%}"),
        ("idle day", idle_calls == 0, "0 calls"),
    ]
    for name, met, target in verdicts:
        print(f"{name}: target {target}: {'met' if met else 'NOT met'}")
    if answered != messages or in_order != CHATS:
        raise SystemExit(f"{answered} of {messages} answered, {in_order} chats in order")


if __name__ == "__main__":
    asyncio.run(main())
