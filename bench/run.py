"""Augure's figures, measured on a real `augure run` process behind the test fakes.

Run: `python -m bench.run` from the repository root, after `pip install -e '.[dev]'`
(`AUGURE_BENCH_PYTHON=/venv/bin/python` runs the bot under another interpreter, e.g. a plain
`pip install .`). It ends with `bench.schemas` (schema tokens with and without deferral).
Prints: per-turn overhead (injected message → sendMessage, instant model), startup time to
the first getUpdates, idle RSS, Bot API calls per simple turn, and the size of the first
model request split into system prompt and tool schemas.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import environment, quantile, spawn, stop, tree_rss_mb
from tests.e2e.conftest import OWNER
from tests.fakes.openai import FakeOpenAI, text
from tests.fakes.telegram import FakeTelegram

TURNS = 100
STARTS = 5


async def startup(home: Path) -> list[float]:
    """Seconds from spawning `augure run` to its first getUpdates."""
    times = []
    for _ in range(STARTS):
        async with FakeTelegram() as telegram, FakeOpenAI() as llm:
            began = time.monotonic()
            process = await spawn(environment(home, telegram, llm))
            first_poll = await telegram.wait_polling(timeout=20)
            times.append(first_poll - began)
            await stop(process)
    return times


async def _timed_turns(telegram: FakeTelegram) -> list[float]:
    latencies = []
    for index in range(TURNS):
        sent_before = len(telegram.sent("sendMessage"))
        injected = time.monotonic()
        telegram.inject_message(OWNER, f"message {index}")
        calls = await telegram.wait_for("sendMessage", count=sent_before + 1, timeout=20)
        latencies.append(calls[-1].at - injected)
    return latencies


async def floor(home: Path) -> list[float]:
    """The same timing for a bare PTB echo bot: what the fake and loopback cost alone."""
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        process = await spawn(environment(home, telegram, llm), "bench.echo_bot")
        await telegram.wait_polling(timeout=20)
        telegram.inject_message(OWNER, "warm up")
        await telegram.wait_for("sendMessage", timeout=20)
        latencies = await _timed_turns(telegram)
        await stop(process)
    return latencies


async def turns(home: Path) -> dict[str, float | int | str]:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.responder = lambda request: text("ok")
        process = await spawn(environment(home, telegram, llm))
        await telegram.wait_polling(timeout=20)
        await telegram.wait_for("setMyCommands", timeout=20)

        # Warm-up turn, then the counted ones.
        telegram.inject_message(OWNER, "warm up")
        await telegram.wait_for("sendMessage", timeout=20)
        await telegram.wait_idle(quiet=0.3)
        first_request = llm.requests[0]

        before = len(telegram.calls)
        telegram.inject_message(OWNER, "count calls")
        await telegram.wait_for("sendMessage", count=2, timeout=20)
        await telegram.wait_idle(quiet=0.5)
        per_turn = [c.method for c in telegram.calls[before:] if c.method != "getUpdates"]

        latencies = await _timed_turns(telegram)

        await telegram.wait_idle(quiet=1.0)
        await asyncio.sleep(2.0)  # let the process settle before reading its memory
        rss = tree_rss_mb(process.pid)
        await stop(process)

    system = first_request["messages"][0]["content"]
    schemas = json.dumps(first_request.get("tools", []))
    whole = json.dumps(first_request)
    return {
        "turn_p50_ms": statistics.median(latencies) * 1000,
        "turn_p95_ms": quantile(latencies, 0.95) * 1000,
        "idle_rss_mb": rss,
        "bot_api_calls_per_turn": ", ".join(sorted(per_turn)),
        "first_request_chars": len(whole),
        "first_request_tokens_est": len(whole) // 4,
        "system_prompt_chars": len(system),
        "system_prompt_tokens_est": len(system) // 4,
        "tool_schemas_chars": len(schemas),
        "tool_schemas_tokens_est": len(schemas) // 4,
    }


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory) / "home"
        starts = await startup(home)
        figures = await turns(home)
        echo = await floor(home)
    print(
        f"startup to first getUpdates: median {statistics.median(starts) * 1000:.0f} ms, ", end=""
    )
    print(f"max {max(starts) * 1000:.0f} ms over {STARTS} starts")
    print(f"turn overhead over {TURNS} turns: p50 {figures['turn_p50_ms']:.2f} ms, ", end="")
    print(f"p95 {figures['turn_p95_ms']:.2f} ms")
    print(
        f"harness floor (bare PTB echo bot, same fake): p50 {statistics.median(echo) * 1000:.2f} ms"
        f"; Augure's own share of p50: "
        f"{figures['turn_p50_ms'] - statistics.median(echo) * 1000:.2f} ms"
    )
    print(f"idle RSS of the process tree after {TURNS + 2} turns: {figures['idle_rss_mb']:.1f} MB")
    print(f"Bot API calls for a simple turn: {figures['bot_api_calls_per_turn']}")
    print(
        f"first model request: {figures['first_request_chars']} chars "
        f"(~{figures['first_request_tokens_est']} tokens); system prompt "
        f"{figures['system_prompt_chars']} chars (~{figures['system_prompt_tokens_est']} tokens), "
        f"tool schemas {figures['tool_schemas_chars']} chars "
        f"(~{figures['tool_schemas_tokens_est']} tokens)"
    )


if __name__ == "__main__":
    asyncio.run(main())
    from bench import schemas

    schemas.main()
