"""The one door to every tool call: a pipeline of named steps over one `Call`.

The steps and their order are `Executor.gates` (each but `release` a method of `Gates`,
augure/tools/gates.py), the tool's run, then `Executor.finishing`; docs/architecture.md lists
them (a unit test keeps that list and this code in step). The gates may end a call with a
result of their own; `run` invokes the tool; the finishing steps turn its result into what the
caller gets. Chat turns, code mode, skills, jobs and `augure tools run` all call
`Executor.run` with their `Caller` (in the `RunContext`): every gate reads who asked from it —
the whole origin chain, the allowed tools, the approvals in force — so none of them can skip
limits, approval, redaction or the record, and a hand-over (background, code, batch) extends
it, never replaces it. A new check is one more method of `Gates` and one more entry in
`gates`; a new caller (batch, background work, subagents, MCP) is one more call of `run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

from augure.approval.gate import ApprovalGate
from augure.common.progress import Outcome, Progress, clean_line
from augure.config.settings import Config
from augure.host.secrets import Redactor
from augure.store.audit import Audit
from augure.tools import leaks, outputs
from augure.tools.base import RunContext
from augure.tools.call import Call, Finish, Gate, Started, Submit, Work
from augure.tools.gates import Gates
from augure.tools.limits import Limits
from augure.tools.policy import Decisions
from augure.tools.registry import ToolRegistry
from augure.tools.result import Cut, ErrorKind, Status, ToolResult

# Callers that hand a call on (the background task manager) name its parts from here.
__all__ = ["Call", "Executor", "Started", "Submit", "Work"]

log = logging.getLogger(__name__)

CANCELLED = "Cancelled before it finished."
STARTED = "Started in the background as task {id}."
BACKGROUND = "background"  # the link a released call adds to its caller's chain
CHAINED = (
    "Tool call refused: background work may release more background work only "
    "{limit} links deep ([background] max_chain). Run it without background, or tell the owner."
)


class Executor:
    def __init__(
        self,
        registry: ToolRegistry,
        audit: Audit,
        gate: ApprovalGate,
        config: Config,
        redactor: Redactor,
        limits: Limits | None = None,
        progress: Progress | None = None,
        background: Submit | None = None,
        absent: Callable[[str], str | None] | None = None,
    ) -> None:
        self.audit = audit
        self.config = config
        self.redactor = redactor
        self.outputs = config.home / "outputs"
        self.limits = limits or Limits(config.profiles, audit.store, config.zone)
        # Calls that are not concurrency-safe (writes, mostly) run one at a time, app-wide.
        self._unsafe = asyncio.Lock()
        self.background = background
        # Why a tool the registry lacks cannot be called (an MCP server down); None: unknown.
        self.absent = absent
        # Each step by the name docs/architecture.md lists it under.
        checks = Gates(
            registry=registry,
            audit=audit,
            approvals=gate,
            config=config,
            redactor=redactor,
            limits=self.limits,
            decisions=Decisions(config, audit, redactor),
            absent=absent,
        )
        self.gates: tuple[tuple[str, Gate], ...] = (
            ("parse", checks.parse),
            ("validate", checks.validate),
            ("scope", checks.scope),
            ("release", self.release),
            ("limits", checks.within_limits),
            ("egress", checks.egress),
            ("policy", checks.policy),
            ("approval", checks.approval),
        )
        self.finishing: tuple[tuple[str, Finish], ...] = (
            ("redact", self.redact),
            ("read", self.read),
            ("record", self.record),
            ("guard", self.guard),
        )
        # Where long calls show how they are doing; None: nowhere.
        self.progress = progress

    @property
    def pipeline(self) -> tuple[str, ...]:
        """The steps' names in the order every call takes them."""
        return (*(name for name, _ in self.gates), "run", *(name for name, _ in self.finishing))

    async def run(self, name: str, sent: str | dict[str, Any], ctx: RunContext) -> ToolResult:
        call = Call(name, sent, ctx)
        stopped = await self._through(call, self.gates)
        if stopped is not None:
            return stopped
        return await self._finished(call, await self.invoke(call))

    async def _through(self, call: Call, gates: Sequence[tuple[str, Gate]]) -> ToolResult | None:
        """The gates in order; the first that ends the call ends it, its limits given back."""
        for _, gate in gates:
            stopped = await gate(call)
            if stopped is not None:
                await self.limits.release(call.reserved)  # it did not run: not counted
                return stopped
        return None

    async def _finished(self, call: Call, result: ToolResult) -> ToolResult:
        for _, finish in self.finishing:
            result = await finish(call, result)
        return result

    async def release(self, call: Call) -> ToolResult | None:
        """`background: true` (docs/background.md): the rest of the pipeline — limits,
        policy, approval, audit — runs as a background task and the turn moves on at once.
        It comes after scope, so nothing outside the turn's allowed tools is ever released,
        and the task works for the same caller one link further (`chat>background`)."""
        if not call.background or self.background is None or call.ctx.chat_id is None:
            return None  # nowhere to report back to (the CLI): it runs in the foreground
        limit = self.config.background.max_chain
        if call.ctx.caller.chain.count(BACKGROUND) >= limit:
            # Unattended work renewing itself (a page saying "fetch me again in the
            # background") stops here: no owner message started the next link.
            return ToolResult.refused(CHAINED.format(limit=limit))
        call.ctx = call.ctx.via(BACKGROUND)
        call.shown = self.redactor.value(call.raw)  # what the task's row may show
        after = [name for name, _ in self.gates].index("release") + 1
        work = functools.partial(self._released, call, self.gates[after:])
        task_id = await self.background(call, work)
        return ToolResult.ok(STARTED.format(id=task_id))

    async def _released(
        self, call: Call, gates: Sequence[tuple[str, Gate]], started: Started
    ) -> ToolResult:
        ran = False
        try:
            stopped = await self._through(call, gates)
            if stopped is not None:
                return stopped
            await started(call.invocation)
            ran = True
            result = await self.invoke(call)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                if ran:
                    await self.audit.finished(
                        call.invocation, success=False, output=CANCELLED, cost_estimate=0
                    )
                else:  # cancelled before it ran (waiting for approval): not counted
                    await self.limits.release(call.reserved)
            raise
        return await self._finished(call, result)

    # -- the call --------------------------------------------------------------------------

    async def invoke(self, call: Call) -> ToolResult:
        tool, running = call.the_tool, call.the_tool.running
        await self.audit.started(call.invocation)
        # The clock of a shown call starts here: time spent waiting for approval is not work.
        chat = call.ctx.chat_id
        board = self.progress if chat is not None else None  # no chat (CLI): nowhere to show
        if board is not None and chat is not None:
            board.started(call.invocation, chat, tool.name)
        # Only a stateful tool reports lines; a direct one shows its elapsed time alone.
        report = self._reporter(call, board) if running.mode == "stateful" else None
        caller = call.ctx.caller.made_from(call.invocation)
        call.ctx = dataclasses.replace(call.ctx, caller=caller, report=report)
        outcome: Outcome = "cancelled"
        try:
            safe = tool.concurrency_safe(call.arguments, self.config)
            async with contextlib.nullcontext() if safe else self._unsafe:
                try:
                    result = await asyncio.wait_for(
                        tool.invoke(call.arguments, call.ctx), running.timeout
                    )
                except TimeoutError:
                    result = ToolResult.error(
                        f"{tool.name} did not finish within {running.timeout:g} s",
                        ErrorKind.TIMEOUT,
                    )
            outcome = _OUTCOMES.get(result.status, "failed")
        finally:
            if board is not None:
                board.ended(call.invocation, outcome)
        if tool.untrusted:
            result.source = tool.name
        return result

    def _reporter(self, call: Call, board: Progress | None) -> Callable[[str], None] | None:
        """The call's progress sink: each line cleaned and redacted once, then given to the
        board and to whoever else listens already (a background task keeps its own copy)."""
        chained = call.ctx.report
        if board is None and chained is None:
            return None
        invocation = call.invocation

        def report(line: str) -> None:
            shown = clean_line(line, self.redactor)
            if board is not None:
                board.reported(invocation, shown)
            if chained is not None:
                chained(shown)

        return report

    # -- finishing -------------------------------------------------------------------------

    async def redact(self, call: Call, result: ToolResult) -> ToolResult:
        return result.with_content(self.redactor(result.content))

    async def read(self, call: Call, result: ToolResult) -> ToolResult:
        """What this unit of work has now read, and from where (its taint); and what the
        call sent out, which may go again unasked."""
        reading = call.ctx.caller.reading
        if reading is not None:
            leaks.read_back(reading, call, result)
        return result

    async def record(self, call: Call, result: ToolResult) -> ToolResult:
        await self.audit.finished(
            call.invocation,
            success=result.success,
            output=result.content,
            cost_estimate=len(result.content) // 4,
        )
        return result

    async def guard(self, call: Call, result: ToolResult) -> ToolResult:
        """Cut an oversized result; the whole text stays readable with read_output, and
        stays marked untrusted when it came from outside."""
        if len(result.content) <= outputs.OUTPUT_LIMIT:
            return result
        outputs.save(self.outputs, call.invocation, result.content, result.source)
        return dataclasses.replace(result, cut=Cut(call.invocation, outputs.OUTPUT_LIMIT))


_OUTCOMES: dict[Status, Outcome] = {Status.OK: "done", Status.REJECTED: "rejected"}
