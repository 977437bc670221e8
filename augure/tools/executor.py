"""The one door to every tool call: a pipeline of named steps over one `Call`.

The steps and their order are `Executor.gates`, the tool's run, then `Executor.finishing`;
docs/architecture.md lists them (a unit test keeps that list and this code in step). The
gates may end a call with a result of their own; `run` invokes the tool; the finishing steps
turn its result into what the caller gets. Chat turns, code mode, skills, jobs and `augure
tools run` all call `Executor.run` with their `Caller` (in the `RunContext`): every gate
reads who asked from it — the whole origin chain, the allowed tools, the approvals in force —
so none of them can skip limits, approval, redaction or the record, and a hand-over
(background, code, batch) extends it, never replaces it. A new check is one more gate in
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

from augure.approval.gate import ApprovalGate, ApprovalRequest
from augure.approval.shown import digest
from augure.common.progress import Outcome, Progress, clean_line
from augure.config.settings import Config
from augure.host.secrets import Redactor
from augure.store.audit import Audit
from augure.tools import leaks, outputs, stays
from augure.tools.base import RunContext
from augure.tools.call import Call, Finish, Gate, Started, Submit, Work, parsed
from augure.tools.limits import Limits
from augure.tools.policy import Decisions, denies
from augure.tools.registry import ToolRegistry, enabled
from augure.tools.result import Cut, ErrorKind, Status, ToolResult

# Callers that hand a call on (the background task manager) name its parts from here.
__all__ = ["Call", "Executor", "Started", "Submit", "Work"]

log = logging.getLogger(__name__)

CANCELLED = "Cancelled before it finished."
CHANGED = (
    "Tool call refused: what would run changed between the approval request and the press; "
    "nothing was run. Ask again to see what would run now."
)
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
        self.registry = registry
        self.audit = audit
        self.approvals = gate
        self.config = config
        self.redactor = redactor
        self.decisions = Decisions(config, audit, redactor)
        self.outputs = config.home / "outputs"
        self.limits = limits or Limits(config.profiles, audit.store, config.zone)
        # Calls that are not concurrency-safe (writes, mostly) run one at a time, app-wide.
        self._unsafe = asyncio.Lock()
        self.background = background
        # Why a tool the registry lacks cannot be called (an MCP server down); None: unknown.
        self.absent = absent
        # Each step by the name docs/architecture.md lists it under.
        self.gates: tuple[tuple[str, Gate], ...] = (
            ("parse", self.parse),
            ("validate", self.validate),
            ("scope", self.scope),
            ("release", self.release),
            ("limits", self.within_limits),
            ("egress", self.egress),
            ("policy", self.policy),
            ("approval", self.approval),
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

    # -- gates -----------------------------------------------------------------------------

    async def parse(self, call: Call) -> ToolResult | None:
        call.tool = self.registry.get(call.name)
        why = self.absent(call.name) if call.tool is None and self.absent else None
        if why is not None:  # a server's reason may quote a secret (a URL's token, a header)
            return ToolResult.error(self.redactor(why))
        if call.tool is None:
            known = ", ".join(sorted(t.name for t in self.registry.list()))
            return ToolResult.error(
                f"unknown tool {call.name!r}; available: {known}", ErrorKind.INVALID_CALL
            )
        raw = parsed(call.name, call.sent)
        if isinstance(raw, ToolResult):
            return raw
        call.raw = raw
        if "background" not in raw:
            return None
        # Not one of the tool's own arguments: taken off before they are validated.
        call.raw = {k: v for k, v in raw.items() if k != "background"}
        wanted = raw["background"]
        takes_it = call.tool.running.background
        if not takes_it or not isinstance(wanted, bool):
            return ToolResult.error(
                f"invalid arguments for {call.name}: background: "
                + ("must be true or false" if takes_it else "not supported"),
                ErrorKind.INVALID_CALL,
            )
        call.background = wanted
        return None

    async def validate(self, call: Call) -> ToolResult | None:
        arguments = call.the_tool.validate(call.raw)
        if isinstance(arguments, str):
            return ToolResult.error(arguments, ErrorKind.INVALID_CALL)
        call.arguments = arguments
        return None

    async def scope(self, call: Call) -> ToolResult | None:
        """The owner's `[tools]` globs, what a guest's chat is offered (docs/security.md,
        "Guests"), and the tools a skill declared for its turn."""
        if not enabled(call.name, self.config):
            return ToolResult.error(
                f"{call.name} is disabled by the owner's [tools] configuration",
                ErrorKind.NOT_ALLOWED,
            )
        if self.config.guest_chat(call.ctx.chat_id) and not self.config.guests.offers(call.name):
            return ToolResult.error(
                f"{call.name} is not offered in a guest's chat: it reaches the owner's own "
                "things ([guests] in the owner's configuration opens it)",
                ErrorKind.NOT_ALLOWED,
            )
        allowed = call.ctx.allowed_tools
        if allowed is not None and call.name not in allowed:
            declared = ", ".join(sorted(allowed)) or "none"
            return ToolResult.error(
                f"{call.name} is not among the tools declared here ({declared})",
                ErrorKind.NOT_ALLOWED,
            )
        return None

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

    async def within_limits(self, call: Call) -> ToolResult | None:
        """The owner's tool profiles (docs/reference/limits.md): refused before anything runs or
        asks."""
        admission = await self.limits.admit(call.ctx.caller, call.name)
        call.profile_asks = admission.asks
        if admission.refusal is None:
            call.reserved = admission.reserved
            return None
        await self.audit.refused(
            tool=call.name,
            origin=call.ctx.origin,
            arguments=self.redactor.value(call.raw),
            chat_id=call.ctx.chat_id,
            turn_id=call.ctx.turn_id,
            reason=admission.refusal,
            parent=call.ctx.caller.parent,
        )
        return ToolResult.refused(admission.refusal)

    async def egress(self, call: Call) -> ToolResult | None:
        """After outside content, a call sending what the model composed (or one choice too
        many among what outside content offered) asks, whatever its egress class."""
        reading = call.ctx.caller.reading
        call.leaving = call.the_tool.approval.leaving(call.arguments)
        if call.leaving and reading is not None and self.config.approval.enabled:
            ask = leaks.assess(reading, call.leaving, self.config.approval)
            # Frozen now: what the unit reads meanwhile must not change what was shown.
            call.leak = ask.shown(reading) if ask is not None else None
        approval = call.the_tool.approval
        if call.leak is None and approval.stays is not None and self.config.approval.enabled:
            staying = functools.partial(approval.staying, call.arguments, call.ctx)
            call.leak = stays.assess(reading, staying, self.config.approval)
        return None

    async def policy(self, call: Call) -> ToolResult | None:
        """The owner's rules on the call's target (every spelling of it) and what a request
        would show; the decision so far goes into the audit record."""
        call.asking = self.decisions.asks(call)
        call.shown = self.decisions.shown(call)
        await self.decisions.match_rules(call)
        call.digest = digest(call.shown) if call.asking else None
        call.granted = self.decisions.granted_in_chat(call)
        decision, decided_by = self.decisions.decision(call)
        call.invocation = await self.decisions.recorded(call, decision, decided_by)
        if call.rule is not None and denies(call.rule):
            return ToolResult.rejected(
                f"Tool call rejected: the owner's rule {call.rule.pattern!r} denies it."
            )
        if call.refused is not None:
            await self.audit.decide(call.invocation, "rejected", "preview", call.refused)
            return ToolResult.error(call.refused)
        return None

    async def approval(self, call: Call) -> ToolResult | None:
        """Ask the owner when the call needs it and no rule decided; then check that what
        would run is still what was shown (docs/security.md)."""
        if not call.asking or call.rule is not None or call.granted:
            self.decisions.with_preview(call)  # not needed, or allowed by a rule or in this chat
            return None
        pattern = self.decisions.offered_rule(call)
        grants, target = call.ctx.caller.grants, call.target
        # Offered where the owner chats, for calls a standing rule could allow (a coding
        # agent, a launch, a target naming a secret: none, they ask every time).
        in_chat = grants is not None and pattern is not None and target is not None
        request = ApprovalRequest(
            call.invocation,
            call.name,
            call.shown,
            call.ctx.chat_id,
            call.ctx.origin,
            pattern,
            call.digest,
            in_chat=in_chat,
        )
        decision = await self.approvals.request(request)
        if not decision.approved:
            return ToolResult.rejected(decision.message_for_model())
        if decision.always and pattern:
            await self.audit.add_rule("allow", pattern, decision.by)
        if decision.in_chat and in_chat and grants is not None and target is not None:
            grants.add(call.name, target)
        if not await self.decisions.unchanged(call):
            await self.audit.started(call.invocation)
            await self.audit.finished(
                call.invocation, success=False, output=CHANGED, cost_estimate=0
            )
            return ToolResult.refused(CHANGED)
        self.decisions.with_preview(call)
        return None

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
