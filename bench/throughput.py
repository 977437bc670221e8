"""Throughput of a real `augure run`: many chats at once, an instant model, every answer counted.

Run: `python -m bench.throughput` from the repository root, after `pip install -e '.[dev]'`.
1. CHATS owners' chats each send PER_CHAT messages at once; the model answers instantly;
   ROUNDS such bursts, each to a fresh bot. Prints messages per second from the first message
   to the last answer delivered (median of the bursts, and the slowest), how many messages
   were answered (all of them, or the bench fails; follow-ups that arrive while a chat's turn
   runs are answered together, docs/telegram.md), and the bot's CPU time per message in a
   burst, with the rate it implies on a core of its own.
2. The same chats get STREAMED answers that take about two seconds each, so previews are
   shown and then finalised. Prints the edits made and how many Telegram refused as "message
   is not modified" (an edit to the text already shown: should be zero).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import cpu_seconds, environment, not_modified, report, spawn, stop, this_turn
from tests.fakes.openai import FakeOpenAI, Reply, text
from tests.fakes.telegram import FakeTelegram

CHATS = 20
PER_CHAT = 20
STREAMED_PER_CHAT = 5
# Bursts, each by a bot process of its own: one process can be up to a quarter faster or
# slower than the next for the whole of its life, so the median of several is reported.
ROUNDS = 3
BURST = CHATS * PER_CHAT
USERS = [5000 + n for n in range(CHATS)]
ANSWER = "ok"
STREAMED = " ".join(f"word{n}" for n in range(60))  # ~2 s at 12 characters per 0.1 s


FAILED = "Something went wrong"  # the bot's answer when a turn raised


def covering(reply: str, request: dict[str, Any]) -> Reply:
    """`reply`, saying how many of the owner's messages it answers."""
    return text(f"{reply} ×{len(this_turn(request))}")


def answered(telegram: FakeTelegram, reply: str) -> int:
    """Messages answered, as the owners see the answers now: a preview later finalised
    counts once."""
    return sum(
        int(message["text"].rpartition(" ×")[2])
        for user in USERS
        for message in telegram.messages(user)
        if message["text"].startswith(f"{reply} ×")
    )


def failed(telegram: FakeTelegram) -> int:
    return sum(
        1
        for user in USERS
        for message in telegram.messages(user)
        if message["text"].startswith(FAILED)
    )


async def wait_answers(telegram: FakeTelegram, reply: str, count: int, timeout: float) -> None:
    """Until `count` answers (or failed turns: no answer will follow them) have arrived."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if answered(telegram, reply) + failed(telegram) >= count:
            return
        await asyncio.sleep(0.005)


async def instant(home: Path) -> tuple[float, int, int, float]:
    """One bot, one burst: messages per second, answers delivered, failed turns, and the
    bot's own CPU time per message during the burst (user + system): on a shared machine
    the rate moves with the other jobs, the CPU time much less, and 1000 / it is the rate a
    free core would give."""
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.responder = lambda request: covering(ANSWER, request)
        process = await spawn(environment(home, telegram, llm, USERS))
        await telegram.wait_polling(timeout=20)
        for user in USERS:  # warm up: first turn of each chat (conversation rows, caches)
            telegram.inject_message(user, "hello")
        await wait_answers(telegram, ANSWER, CHATS, timeout=60)
        await telegram.wait_idle(quiet=0.5, timeout=60)
        before = answered(telegram, ANSWER)
        used_before = cpu_seconds(process.pid)
        started = time.monotonic()
        for index in range(PER_CHAT):
            for user in USERS:
                telegram.inject_message(user, f"message {index}")
        await wait_answers(telegram, ANSWER, before + BURST, timeout=120)
        elapsed = time.monotonic() - started
        cpu_per_message = (cpu_seconds(process.pid) - used_before) / BURST * 1000
        delivered = answered(telegram, ANSWER) - before
        errors = failed(telegram)
        await stop(process)
    return BURST / elapsed, delivered, errors, cpu_per_message


async def streamed(home: Path) -> tuple[int, int, int]:
    def reply(request: dict[str, Any]) -> Reply:
        streamed = covering(STREAMED, request)
        return text(streamed.text or "", chunk_size=12, chunk_delay=0.1)

    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.responder = reply
        process = await spawn(environment(home, telegram, llm, USERS))
        await telegram.wait_polling(timeout=20)
        for index in range(STREAMED_PER_CHAT):
            for user in USERS:
                telegram.inject_message(user, f"tell me more {index}")
        await wait_answers(telegram, STREAMED, CHATS * STREAMED_PER_CHAT, timeout=180)
        await telegram.wait_idle(quiet=1.0, timeout=30)
        edits = len(telegram.sent("editMessageText"))
        refused = not_modified(telegram)
        finals = answered(telegram, STREAMED)
        await stop(process)
    return edits, refused, finals


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        bursts = [await instant(Path(directory) / f"instant{n}") for n in range(ROUNDS)]
        rates = [rate for rate, _, _, _ in bursts]
        delivered = sum(answers for _, answers, _, _ in bursts)
        errors = sum(failures for _, _, failures, _ in bursts)
        cpus = [cpu for _, _, _, cpu in bursts]
        edits, refused, finals = await streamed(Path(directory) / "streamed")
    total = ROUNDS * BURST
    cpu = statistics.median(cpus)
    print(
        f"{CHATS} chats x {PER_CHAT} messages at once, {ROUNDS} bots, instant model "
        f"(bursts: {', '.join(f'{rate:.0f}' for rate in rates)} msg/s); "
        f"then {STREAMED_PER_CHAT} streamed"
    )
    report(
        "throughput",
        {
            f"messages per second, median of {ROUNDS} bursts": (statistics.median(rates), "msg/s"),
            "messages per second, slowest burst": (min(rates), "msg/s"),
            f"bot CPU per message in a burst, median of {ROUNDS}": (cpu, "ms"),
            "messages per second one free core would allow (1000 / CPU per message)": (
                1000 / cpu,
                "msg/s",
            ),
            f"messages answered of {total}": (delivered, ""),
            "turns that failed ('Something went wrong')": (errors, ""),
            f"streamed messages answered of {CHATS * STREAMED_PER_CHAT}": (finals, ""),
            "edits made while streaming": (edits, ""),
            "edits refused as 'message is not modified'": (refused, ""),
        },
    )
    if delivered != total:
        raise SystemExit(f"only {delivered} of {total} messages were answered")


if __name__ == "__main__":
    asyncio.run(main())
