"""Code mode's cost: one snippet with three cheap tool calls, through the real executor.

Run: `python -m bench.codemode` from the repository root.
Prints the median and p90 of, over RUNS runs each:
- the monty runtime alone (three host calls answered at once: worker start + interpreter),
- execute_code through the executor (validation, policy, audit rows in SQLite for the
  execute_code call and its three inner calls, redaction), as a model's call would run,
- the same three calls made directly through the executor, as three chat tool calls would,
and the size of the execute_code schema (stubs of the built-in tools) in tokens (chars/4).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from augure.approval.gate import ApprovalGate
from augure.codemode import runtime
from augure.codemode.tool import code_mode_schema, execute_code
from augure.common.caller import Caller
from augure.config.settings import load_config
from augure.core.toolset import build_registry
from augure.host.secrets import Redactor
from augure.memory.store import MemoryStore
from augure.store.audit import Audit
from augure.store.state import Store
from augure.tools.base import RunContext
from augure.tools.executor import Executor

RUNS = 50
SNIPPET = (
    "notes = api.memory_read(path='notes.md')\n"
    "files = api.memory_read()\n"
    "now = api.datetime(timezone='UTC')\n"
    "print(len(notes), len(files), now[:10])"
)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _measure(label: str, action: Callable[[], Awaitable[Any]]) -> None:
    await action()  # warm: imports, first worker spawn, SQLite pages
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        await action()
        times.append((time.perf_counter() - started) * 1000)
    median, p90 = statistics.median(times), _quantile(times, 0.9)
    print(f"{label:<52} median {median:6.2f} ms   p90 {p90:6.2f} ms")


async def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        home = Path(temp)
        config = load_config(home=home)
        store = await Store.open(home / "state.db")
        registry = build_registry(config, [execute_code])
        audit = Audit(store)
        run = Executor(registry, audit, ApprovalGate(audit, 5), config, Redactor({})).run
        memory = MemoryStore(home / "memory")
        memory.ensure()
        memory.write("notes.md", "- a cheap file to read\n")
        ctx = RunContext(
            config,
            memory,
            store,
            Caller.of("chat", chat_id="bench"),
            registry=registry,
            execute=run,
        )

        async def answer(arguments: dict[str, Any]) -> str:
            return "ok"

        instant = {name: runtime.ApiFunction([], answer) for name in ("memory_read", "datetime")}
        limits = runtime.RunLimits(
            config.code_mode.timeout_seconds, config.code_mode.max_tool_calls
        )

        async def bare() -> None:
            outcome = await runtime.run(SNIPPET, instant, limits)
            assert outcome.ok, outcome.error

        async def through_executor() -> None:
            result = await ctx.call("execute_code", {"code": SNIPPET})
            assert result.success, result.output

        async def direct() -> None:
            for name, args in (
                ("memory_read", {"path": "notes.md"}),
                ("memory_read", {}),
                ("datetime", {"timezone": "UTC"}),
            ):
                assert (await ctx.call(name, args)).success

        print(f"code mode: a snippet with three tool calls, {RUNS} runs each")
        await _measure("monty runtime alone (host answers at once)", bare)
        await _measure("execute_code through the executor (4 audit rows)", through_executor)
        await _measure("the same 3 calls directly through the executor", direct)
        schema = json.dumps(code_mode_schema(registry))
        print(f"execute_code schema with the built-in tools' stubs: {len(schema) // 4} tokens")
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
