"""The task manager: runs released calls as asyncio tasks, keeps their rows current, cancels
them, and brings each result back to its chat as a new turn.

The executor hands over a call and the rest of its pipeline (`submit`); nothing here imports
the agent: the turn that reports a result is a callable given at construction.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from augure.common.caller import Caller
from augure.store.tasks import Tasks, TaskState
from augure.tools.executor import Call, Work
from augure.tools.result import Artifact, ToolResult, plain, wrap_untrusted

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Report:
    """A finished task's result, for the turn that reports it in its chat."""

    chat_id: str
    content: str  # what the report turn reads; outside content in it is marked
    files: list[Artifact]  # what the task produced (a screenshot, a document)
    # The released call's caller, whole: its chain, the tools of the turn that released it,
    # the chat's grants and what the releasing turn and the task read. The report turn works
    # for this caller (docs/security.md, "Who asked"); it goes on from its reading's fetches,
    # so a chain of reports never starts afresh.
    caller: Caller
    source: str | None  # provenance of the result, as data


# Runs the report turn and delivers its reply, then the task's files.
Announce = Callable[[Report], Awaitable[None]]
CANCELLED = "Cancelled by the owner."
PROGRESS_SECONDS = 1.0  # at most one progress write per task per second
CANCEL_WAIT_SECONDS = 10.0  # a sandbox's kill waits up to 5 s for its pipes


@dataclass(eq=False)
class _Running:
    id: str
    chat_id: str
    tool: str
    caller: Caller  # the released call's: its reading is the releasing turn's, shared
    work: asyncio.Task[ToolResult] | None = None
    runner: asyncio.Task[None] | None = None
    line: str | None = None
    written: float = 0.0  # monotonic time of the last progress write
    flush: asyncio.Task[None] | None = None
    # Where the progress lines come from when they may carry outside content (a page the
    # tool reads, a command's output): the tool's name, as its result would be marked.
    outside: str | None = None


class TaskManager:
    def __init__(
        self, tasks: Tasks, announce: Announce, progress_seconds: float = PROGRESS_SECONDS
    ) -> None:
        self.tasks = tasks
        self.announce = announce
        self.progress_seconds = progress_seconds
        self._running: dict[str, _Running] = {}
        self._closing = False

    async def submit(self, call: Call, work: Work) -> str:
        """Record the task and start its work; returns the id at once."""
        caller = call.ctx.caller
        chat = caller.chat_id
        assert chat is not None, "the executor releases only calls of a chat"
        task_id = await self.tasks.create(
            chat, call.name, call.shown, origin=caller.origin, tools=caller.allowed_tools
        )
        if self._closing:
            return task_id  # stays `running`: the next start reports it interrupted
        entry = _Running(task_id, chat, call.name, caller)
        tool = call.tool  # set by the parse step; a bare call (a unit test's) has none
        brings_outside = tool is not None and (tool.untrusted or tool.relays)
        entry.outside = call.name if brings_outside else None
        call.ctx = dataclasses.replace(call.ctx, report=functools.partial(self._report, entry))
        entry.work = asyncio.create_task(work(functools.partial(self.tasks.attach, task_id)))
        entry.runner = asyncio.create_task(self._run(entry, entry.work))
        self._running[task_id] = entry
        return task_id

    def running(self) -> list[str]:
        return list(self._running)

    def progress_source(self, task_id: str) -> str | None:
        """Where a running task's progress line comes from, when it may be outside content;
        a result carries its own source once the task ends."""
        entry = self._running.get(task_id)
        return entry.outside if entry is not None else None

    async def cancel(self, task_id: str) -> str:
        """Stop a running task (its process tree goes with it); one line for the owner."""
        entry = self._running.get(task_id)
        work, runner = (entry.work, entry.runner) if entry else (None, None)
        if work is None or runner is None:
            row = await self.tasks.get(task_id)
            if row is None:
                return f"There is no task {task_id}."
            if row.status != "running":
                return f"Task {task_id} is not running ({row.status})."
        if work is None or runner is None or not work.cancel():
            return f"Task {task_id} has just finished; it was not cancelled."
        await asyncio.wait({runner}, timeout=CANCEL_WAIT_SECONDS)
        row = await self.tasks.get(task_id)
        if row is not None and row.status != "cancelled":
            return f"Task {task_id} finished before it could be cancelled ({row.status})."
        return f"Cancelled task {task_id}."

    async def close(self) -> None:
        """At shutdown: stop everything. Rows stay `running`, so the next start tells the
        owner the work was interrupted."""
        self._closing = True
        entries = list(self._running.values())
        for entry in entries:
            for task in (entry.runner, entry.flush, entry.work):
                if task is not None:
                    task.cancel()
        pending = [t for e in entries for t in (e.runner, e.work, e.flush) if t is not None]
        if pending:
            await asyncio.wait(pending, timeout=CANCEL_WAIT_SECONDS)

    # -- the task's life -------------------------------------------------------------------

    async def _run(self, entry: _Running, work: asyncio.Task[ToolResult]) -> None:
        # Waiting with `wait` never cancels the work: a cancelled runner means shutdown.
        await asyncio.wait({work})
        if self._closing:
            return
        self._running.pop(entry.id, None)
        if entry.flush is not None:
            entry.flush.cancel()
        status, text, files, source = _outcome(entry, work)
        if not await self.tasks.finish(entry.id, status, text, entry.line, source):
            return  # ended otherwise meanwhile
        if status != "cancelled":
            await self._report_back(entry, status, text, files, source)

    async def _report_back(
        self,
        entry: _Running,
        status: TaskState,
        text: str,
        files: list[Artifact],
        source: str | None,
    ) -> None:
        ended = "finished" if status == "done" else "failed"
        shown = wrap_untrusted(text, source) if source is not None else text
        content = f"[Background task {entry.id} ({entry.tool}) {ended}. Its result:]\n{shown}"
        report = Report(entry.chat_id, content, files, entry.caller, source)
        try:
            await self.announce(report)
        except Exception:
            # Left unreported: the next start tells the owner where the result is.
            log.exception("could not report background task %s", entry.id)
            return
        with contextlib.suppress(Exception):
            await self.tasks.claim_notice(entry.id)

    # -- progress --------------------------------------------------------------------------

    def _report(self, entry: _Running, line: str) -> None:
        entry.line = line
        if entry.flush is None or entry.flush.done():
            entry.flush = asyncio.create_task(self._flush(entry))

    async def _flush(self, entry: _Running) -> None:
        """Write the latest line, at most once per `progress_seconds`; lines that arrive
        meanwhile replace each other and only the newest is written."""
        while True:
            wait = entry.written + self.progress_seconds - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            line = entry.line
            entry.written = time.monotonic()
            if line is not None:
                try:
                    await self.tasks.progress(entry.id, line)
                except Exception as exc:  # progress is a convenience; the result is not lost
                    log.warning("could not record progress of task %s: %s", entry.id, exc)
            if entry.line == line:
                return


TaskOutcome = tuple[TaskState, str, list[Artifact], str | None]


def _outcome(entry: _Running, work: asyncio.Task[ToolResult]) -> TaskOutcome:
    """The task's status, its result as the model reads it (unmarked), the files it produced
    and the result's provenance."""
    if work.cancelled():
        return "cancelled", CANCELLED, [], None
    failure = work.exception()
    if failure is not None:
        # Only the kind: an unexpected error's text may quote what it was handling.
        log.error("background task %s failed", entry.id, exc_info=failure)
        return "failed", f"Error: {entry.tool} failed: {type(failure).__name__}", [], None
    result = work.result()
    status: TaskState = "done" if result.success else "failed"
    return status, plain(result), result.artifacts, result.source
