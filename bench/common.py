"""What the process benches share: a real `augure run` behind the fakes, and the record of runs.

Each bench prints its figures and, beside each, the ratio to the same figure of the previous
run on this machine (kept in `.bench/<bench>.json`, or `$AUGURE_BENCH_RESULTS`), so a change
can be judged by running the bench before and after it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psutil

from tests.e2e.conftest import bot_environment
from tests.fakes.openai import FakeOpenAI
from tests.fakes.telegram import FakeTelegram

# The bot's interpreter. The default is this one (a dev install: the openai SDK then also
# loads aiohttp, a test dependency, ~7 MB); point it at a plain `pip install .` venv to
# measure what a user runs.
BOT_PYTHON = os.environ.get("AUGURE_BENCH_PYTHON", sys.executable)
RESULTS = Path(os.environ.get("AUGURE_BENCH_RESULTS", ".bench"))


def environment(
    home: Path, telegram: FakeTelegram, llm: FakeOpenAI, users: Iterable[int] = ()
) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AUGURE", "OPENAI"))}
    # A user's install has its bytecode compiled (pip does it); without the cache every
    # start would compile all of Augure again (~75 ms), which no user pays.
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    env = base | bot_environment(home, telegram, llm)
    if users:
        env["AUGURE_ALLOWED_USERS"] = ",".join(str(u) for u in users)
    return env


async def spawn(env: dict[str, str], *command: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        BOT_PYTHON,
        "-m",
        *(command or ("augure", "run")),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def stop(process: asyncio.subprocess.Process) -> None:
    process.terminate()
    await asyncio.wait_for(process.wait(), 15)


def tree(pid: int) -> list[psutil.Process]:
    """The process and every process it started (browser, sandbox, code-mode workers)."""
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def tree_rss_mb(pid: int) -> float:
    total = 0
    for process in tree(pid):
        try:
            total += process.memory_info().rss
        except psutil.NoSuchProcess:
            continue  # ended while being counted
    return total / 1024 / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far (its threads included)."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def this_turn(request: dict[str, Any]) -> list[str]:
    """The owner's messages a model request answers: those after the model's last answer
    (several when follow-ups were folded), without the clock note before the newest."""
    messages = request["messages"]
    answered = [n for n, m in enumerate(messages) if m["role"] == "assistant"]
    start = answered[-1] + 1 if answered else 1
    return [
        str(m["content"])
        for m in messages[start:]
        if m["role"] == "user" and not str(m["content"]).startswith("[Now: ")
    ]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def not_modified(telegram: FakeTelegram) -> int:
    """Edits Telegram refused because the message already showed exactly that."""
    return sum(
        1
        for call in telegram.calls
        if "message is not modified" in str(call.response.get("description", ""))
    )


def report(bench: str, figures: dict[str, tuple[float, str]]) -> None:
    """Print `label: value unit`, with the ratio to the previous run, and save this run."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    saved = RESULTS / f"{bench}.json"
    previous: dict[str, float] = json.loads(saved.read_text()) if saved.exists() else {}
    for label, (value, unit) in figures.items():
        before = previous.get(label)
        if before:
            ratio = f"  ({value / before:.2f}x the previous run's {before:.4g})"
        elif before == 0:
            ratio = "  (previous run: 0)"
        else:
            ratio = ""
        print(f"{label}: {value:.4g} {unit}{ratio}")
    saved.write_text(json.dumps({label: value for label, (value, _) in figures.items()}))
