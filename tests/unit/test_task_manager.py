"""The task manager on a real state.db: cancel racing finish, progress throttling, shutdown."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from augure.background import TaskManager
from augure.background.manager import Report
from augure.common.caller import Caller
from augure.config.settings import load_config
from augure.memory.store import MemoryStore
from augure.store.state import Store
from augure.store.tasks import Tasks
from augure.tools.base import RunContext
from augure.tools.executor import Call, Started
from augure.tools.result import Artifact, ToolResult

Work = Callable[[Started], Coroutine[Any, Any, ToolResult]]


class CountingTasks(Tasks):
    """The real store, counting progress writes."""

    progress_writes = 0

    async def progress(self, task_id: str, line: str) -> None:
        self.progress_writes += 1
        await super().progress(task_id, line)


class Harness:
    def __init__(self, store: Store, home: Path) -> None:
        self.store = store
        self.home = home
        self.tasks = CountingTasks(store.db)
        self.announced: list[tuple[str, str]] = []
        self.files: list[Artifact] = []
        self.manager = TaskManager(self.tasks, self.announce)

    async def announce(self, report: Report) -> None:
        self.announced.append((report.chat_id, report.content))
        self.files += report.files

    def call(self) -> Call:
        ctx = RunContext(
            load_config(home=self.home),
            MemoryStore(self.home / "memory"),
            self.store,
            Caller.of("chat", chat_id="chat-1"),
        )
        call = Call("job", {}, ctx)
        call.shown = {"name": "x"}
        return call

    async def ended(self, task_id: str) -> str:
        for _ in range(1000):
            row = await self.tasks.get(task_id)
            assert row is not None
            if row.status != "running" and task_id not in self.manager.running():
                return row.status
            await asyncio.sleep(0.01)
        raise AssertionError("never ended")


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    store = await Store.open(tmp_path / "state.db")
    try:
        yield Harness(store, tmp_path)
    finally:
        await store.close()


async def settle() -> None:
    """Every task of the manager has run to its end (the report back included)."""
    others = asyncio.all_tasks() - {asyncio.current_task()}
    if others:
        await asyncio.wait(others)


def quick(steps: int) -> Work:
    async def work(started: Started) -> ToolResult:
        await started("inv-1")
        for _ in range(steps):
            await asyncio.sleep(0)
        return ToolResult.ok("all done")

    return work


@pytest.mark.parametrize("yields", range(12))
async def test_cancel_racing_the_end_has_one_outcome(harness: Harness, yields: int) -> None:
    """Whichever wins, the row, the answer and the report back agree: a cancelled task
    reports nothing; a finished one is reported once and never turned into `cancelled`."""
    task_id = await harness.manager.submit(harness.call(), quick(3))
    for _ in range(yields):
        await asyncio.sleep(0)
    said = await harness.manager.cancel(task_id)
    await settle()
    status = await harness.ended(task_id)
    if said == f"Cancelled task {task_id}.":
        assert status == "cancelled" and harness.announced == []
    else:
        assert status == "done", said
        assert [content for _, content in harness.announced] == [
            f"[Background task {task_id} (job) finished. Its result:]\nall done"
        ]
    row = await harness.tasks.get(task_id)
    assert row is not None and row.notified == (status == "done")
    assert row.invocation == "inv-1" or status == "cancelled"  # cancelled before it started


async def test_cancelling_a_long_task_cancels_its_work(harness: Harness) -> None:
    entered, cleaned = asyncio.Event(), asyncio.Event()

    async def long(started: Started) -> ToolResult:
        entered.set()
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned.set()
        return ToolResult.ok("never")

    task_id = await harness.manager.submit(harness.call(), long)
    await entered.wait()
    assert await harness.manager.cancel(task_id) == f"Cancelled task {task_id}."
    assert cleaned.is_set()  # the work's own cleanup (a sandbox's kill) ran before the answer
    assert await harness.ended(task_id) == "cancelled"
    assert await harness.manager.cancel(task_id) == f"Task {task_id} is not running (cancelled)."
    assert await harness.manager.cancel("nosuch") == "There is no task nosuch."


async def test_a_burst_of_progress_lines_is_one_write_of_the_latest(harness: Harness) -> None:
    call = harness.call()
    release = asyncio.Event()

    async def chatty(started: Started) -> ToolResult:
        for n in range(50):
            call.ctx.progress(f"step {n}")
        await release.wait()
        return ToolResult.ok("done")

    task_id = await harness.manager.submit(call, chatty)
    for _ in range(200):
        row = await harness.tasks.get(task_id)
        if row is not None and row.progress is not None:
            break
        await asyncio.sleep(0.01)
    assert row is not None and row.progress == "step 49"
    assert harness.tasks.progress_writes == 1
    release.set()
    assert await harness.ended(task_id) == "done"


async def test_a_failed_result_is_reported_as_failed(harness: Harness) -> None:
    async def failing(started: Started) -> ToolResult:
        return ToolResult.error("exit code: 2")

    async def broken(started: Started) -> ToolResult:
        raise RuntimeError("secret-looking detail")

    first = await harness.manager.submit(harness.call(), failing)
    second = await harness.manager.submit(harness.call(), broken)
    await settle()
    assert await harness.ended(first) == "failed"
    assert await harness.ended(second) == "failed"
    told = dict((c.split(" ")[2], c) for _, c in harness.announced)
    assert told[first].endswith("(job) failed. Its result:]\nError: exit code: 2")
    assert told[second].endswith("Error: job failed: RuntimeError")
    assert "secret-looking" not in told[second]


async def test_shutdown_leaves_running_rows_for_the_next_start(harness: Harness) -> None:
    async def long(started: Started) -> ToolResult:
        await asyncio.sleep(3600)
        return ToolResult.ok("never")

    task_id = await harness.manager.submit(harness.call(), long)
    await asyncio.sleep(0)
    await harness.manager.close()
    row = await harness.tasks.get(task_id)
    assert row is not None and row.status == "running" and harness.announced == []
    (interrupted,) = await harness.tasks.interrupt_running()
    assert interrupted.id == task_id and interrupted.status == "interrupted"
    assert await harness.tasks.claim_notice(task_id)
    assert not await harness.tasks.claim_notice(task_id)
    assert await harness.tasks.interrupt_running() == []


async def test_a_report_that_fails_is_left_for_the_next_start(harness: Harness) -> None:
    async def unreachable(chat_id: str, content: str) -> None:
        raise ConnectionError("Bot API unreachable")

    harness.manager.announce = unreachable
    task_id = await harness.manager.submit(harness.call(), quick(0))
    await settle()
    assert await harness.ended(task_id) == "done"
    (unreported,) = await harness.tasks.unreported()
    assert unreported.id == task_id and not unreported.notified


async def test_work_released_during_shutdown_is_not_started(harness: Harness) -> None:
    await harness.manager.close()
    ran: list[str] = []

    async def work(started: Started) -> ToolResult:
        ran.append("ran")
        return ToolResult.ok("done")

    task_id = await harness.manager.submit(harness.call(), work)
    await settle()
    row = await harness.tasks.get(task_id)
    assert row is not None and row.status == "running" and ran == []
    assert harness.manager.running() == []
