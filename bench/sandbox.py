"""Cost of one `sandbox_exec` call on the bwrap backend (the tool itself, no approval).

Run: `python -m bench.sandbox` from the repository root (Linux, bubblewrap installed).
Prints the median and p90 wall time of `sandbox_exec` running
`/usr/bin/python3 -I -S -c 'print(1)'` over 20 runs, next to the same command run bare.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from augure.common.caller import Caller
from augure.config.settings import load_config
from augure.memory.store import MemoryStore
from augure.tools.base import RunContext
from augure.tools.sandbox_exec import sandbox_exec

RUNS = 20
COMMAND = "/usr/bin/python3 -I -S -c 'print(1)'"


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms"


async def _timed(ctx: RunContext, command: str, expected: str) -> list[float] | None:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        result = await sandbox_exec.run_ungated({"command": command}, ctx)
        times.append(time.perf_counter() - started)
        if not result.success or not result.output.rstrip().endswith(expected):
            print(f"sandbox_exec failed: {result.output}", file=sys.stderr)
            return None
    return times


async def main() -> int:
    with tempfile.TemporaryDirectory() as directory:
        config = load_config(home=Path(directory))
        ctx = RunContext(
            config,
            MemoryStore(config.memory_dir),
            cast(Any, None),
            Caller.of("chat", chat_id="bench"),
        )
        await sandbox_exec.run_ungated({"command": COMMAND}, ctx)  # workspace creation, caches
        echo = await _timed(ctx, "echo hi", "hi")
        python = await _timed(ctx, COMMAND, "1")
        if echo is None or python is None:
            return 1
    bare = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", COMMAND], check=True, capture_output=True)
        bare.append(time.perf_counter() - started)
    backend = config.sandbox.backend
    print(f"sandbox_exec echo hi ({RUNS} runs, {backend}): {_ms(echo)}")
    print(f"sandbox_exec {COMMAND} ({RUNS} runs, {backend}): {_ms(python)}")
    print(f"same command bare, /bin/sh -c ({RUNS} runs): {_ms(bare)}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
