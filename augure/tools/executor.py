"""The one door to every tool call: a pipeline of named steps over one `Call`.

    parse ▶ validate ▶ scope ▶ release ▶ limits ▶ egress ▶ policy ▶ approval ▶ run ▶ redact ▶ read
    ▶ record ▶ guard

The gates (parse … approval) may end a call with a result of their own; `run` invokes the
tool; the finishing steps (redact … guard) turn its result into what the caller gets. Chat
turns, code mode, skills, jobs and `augure tools run` all call `Executor.run` with their
`Caller` (in the `RunContext`): every gate reads who asked from it — the whole origin chain,
the allowed tools, the approvals in force — so none of them can skip limits, approval,
redaction or the record, and a hand-over (background, code, batch) extends it, never
replaces it. A new check is
one more gate in `gates`; a new caller (batch, background work, subagents, MCP) is one more
call of `run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from augure.approval.gate import ApprovalGate, ApprovalRequest
from augure.approval.rules import verdict
from augure.approval.shown import digest
from augure.config import Config
from augure.limits import Limits
from augure.progress import Outcome, Progress, clean_line
from augure.secrets import Redactor
from augure.store.audit import Audit, Rule
from augure.tools import leaks, outputs
from augure.tools.base import RunContext, Tool
from augure.tools.registry import ToolRegistry, enabled
from augure.tools.result import Cut, ErrorKind, Status, ToolResult

log = logging.getLogger(__name__)

CANCELLED = "Cancelled before it finished."
CHANGED = (
    "Tool call refused: what would run changed between the approval request and the press; "
    "nothing was run. Ask again to see what would run now."
)


@dataclasses.dataclass
class Call:
    """One call on its way through the pipeline; each step fills in what it decides."""

    name: str
    arguments: str | dict[str, Any]
    ctx: RunContext
    tool: Tool | None = None
    background: bool = False  # asked to be released from the turn (docs/background.md)
    args: dict[str, Any] = dataclasses.field(default_factory=dict)
    params: Any = None
    asking: bool = False  # needs the owner's approval unless a rule covers it
    shown: dict[str, Any] = dataclasses.field(default_factory=dict)  # what a request shows
    target: str | None = None
    rule: Rule | None = None
    preview: dict[str, Any] | None = None
    invocation: str = ""  # the audit record, from the policy step on
    digest: str | None = None  # of what the approval request showed
    profile_asks: bool = False  # a profile requires approval (it can add it, never remove)
    reserved: tuple[int, ...] = ()  # limit counts taken; given back if the call does not run
    granted: bool = False  # allowed by `Allow in this chat` for this caller's chat
    # Could carry data out after outside content: why it asks, as the request shows it.
    leak: dict[str, Any] | None = None

    @property
    def the_tool(self) -> Tool:
        assert self.tool is not None, "the parse step sets the tool"
        return self.tool


Gate = Callable[[Call], Awaitable[ToolResult | None]]
Finish = Callable[[Call, ToolResult], Awaitable[ToolResult]]
# A released call's remaining pipeline; it calls `started(invocation)` just before the tool
# runs, so the background task knows which audit record is its own.
Started = Callable[[str], Awaitable[None]]
Work = Callable[[Started], Coroutine[Any, Any, ToolResult]]
# Takes a released call and its work; returns the background task's id
# (docs/reference/execution.md#background-work).
Submit = Callable[[Call, Work], Awaitable[str]]
STARTED = "Started in the background as task {id}."
SESSION = "session"  # the audit's `decided_by` for a call `Allow in this chat` covered


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
        self.outputs = config.home / "outputs"
        self.limits = limits or Limits(config.profiles, audit.store, config.zone)
        # Calls that are not concurrency-safe (writes, mostly) run one at a time, app-wide.
        self._unsafe = asyncio.Lock()
        self.background = background
        # Why a tool the registry lacks cannot be called (an MCP server down); None: unknown.
        self.absent = absent
        self.gates: tuple[Gate, ...] = (
            self.parse,
            self.validate,
            self.scope,
            self.release,
            self.limits_step,
            self.egress,
            self.policy,
            self.approval,
        )
        self.finishing: tuple[Finish, ...] = (self.redact, self.read, self.record, self.guard)
        # Where long calls show how they are doing (docs/reference/execution.md#progress); None:
        # nowhere.
        self.progress = progress

    async def run_calls(
        self, calls: Sequence[tuple[str, str | dict[str, Any]]], ctx: RunContext
    ) -> list[ToolResult]:
        """The calls of one model response: concurrently where safe, results in their order."""
        return list(await asyncio.gather(*(self.run(name, args, ctx) for name, args in calls)))

    async def run(self, name: str, arguments: str | dict[str, Any], ctx: RunContext) -> ToolResult:
        call = Call(name, arguments, ctx)
        for gate in self.gates:
            stopped = await gate(call)
            if stopped is not None:
                await self.limits.release(call.reserved)  # it did not run: not counted
                return stopped
        result = await self.invoke(call)
        for finish in self.finishing:
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
        if isinstance(call.arguments, dict):
            parsed: Any = call.arguments
        else:
            try:
                parsed = json.loads(call.arguments or "{}")
            except json.JSONDecodeError as exc:
                return ToolResult.error(
                    f"arguments for {call.name} are not valid JSON ({exc.msg})",
                    ErrorKind.INVALID_CALL,
                )
        if not isinstance(parsed, dict):
            return ToolResult.error(
                f"arguments for {call.name} must be a JSON object", ErrorKind.INVALID_CALL
            )
        call.args = parsed
        if "background" not in parsed:
            return None
        # Not one of the tool's own arguments: taken off before they are validated.
        call.args = {k: v for k, v in parsed.items() if k != "background"}
        wanted = parsed["background"]
        if not call.tool.background or not isinstance(wanted, bool):
            return ToolResult.error(
                f"invalid arguments for {call.name}: background: "
                + ("must be true or false" if call.tool.background else "not supported"),
                ErrorKind.INVALID_CALL,
            )
        call.background = wanted
        return None

    async def release(self, call: Call) -> ToolResult | None:
        """`background: true` (docs/background.md): the rest of the pipeline — limits,
        policy, approval, audit — runs as a background task and the turn moves on at once.
        It comes after scope, so nothing outside the turn's allowed tools is ever released,
        and the task works for the same caller one link further (`chat>background`)."""
        if not call.background or self.background is None or call.ctx.chat_id is None:
            return None  # nowhere to report back to (the CLI): it runs in the foreground
        call.ctx = call.ctx.via("background")
        call.shown = self.redactor.value(call.args)  # what the task's row may show
        rest = self.gates[self.gates.index(self.release) + 1 :]
        task_id = await self.background(call, functools.partial(self._released, call, rest))
        return ToolResult.ok(STARTED.format(id=task_id))

    async def _released(self, call: Call, gates: Sequence[Gate], started: Started) -> ToolResult:
        ran = False
        try:
            for gate in gates:
                stopped = await gate(call)
                if stopped is not None:
                    await self.limits.release(call.reserved)
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
        for finish in self.finishing:
            result = await finish(call, result)
        return result

    async def validate(self, call: Call) -> ToolResult | None:
        params = call.the_tool.validate(call.args)
        if isinstance(params, str):
            return ToolResult.error(params, ErrorKind.INVALID_CALL)
        call.params = params
        return None

    async def scope(self, call: Call) -> ToolResult | None:
        """The owner's `[tools]` globs, and the tools a skill declared for its turn."""
        if not enabled(call.name, self.config):
            return ToolResult.error(
                f"{call.name} is disabled by the owner's [tools] configuration",
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

    async def limits_step(self, call: Call) -> ToolResult | None:
        """The owner's tool profiles (docs/reference/limits.md#over-a-limit): refused before
        anything runs or asks."""
        admission = await self.limits.admit(call.ctx.caller, call.name)
        call.profile_asks = admission.asks
        if admission.refusal is None:
            call.reserved = admission.reserved
            return None
        await self.audit.refused(
            tool=call.name,
            origin=call.ctx.origin,
            arguments=self.redactor.value(call.args),
            chat_id=call.ctx.chat_id,
            turn_id=call.ctx.turn_id,
            reason=admission.refusal,
            parent=call.ctx.caller.parent,
        )
        return ToolResult.refused(admission.refusal)

    async def egress(self, call: Call) -> ToolResult | None:
        """After outside content, a fetch whose URL the model composed (or one too many to a
        site only outside content named) asks the owner, whatever its egress class."""
        reading = call.ctx.caller.reading
        leaving = call.the_tool.leaving(call.params)
        if leaving and reading is not None and self.config.approval.enabled:
            ask = leaks.assess(reading, leaving, self.config.approval)
            # Frozen now: what the unit reads meanwhile must not change what was shown.
            call.leak = ask.shown(reading) if ask is not None else None
        return None

    async def policy(self, call: Call) -> ToolResult | None:
        """The owner's rules on the call's target (every spelling of it) and what a request
        would show; the decision so far goes into the audit record."""
        tool, params = call.the_tool, call.params
        call.asking = (
            (tool.needs_approval(params) and self.config.approval.enabled)
            or call.profile_asks
            or call.leak is not None
        )
        call.shown, call.target = self._shown(call), tool.target_for(params)
        aliases = tool.aliases_for(params, self.config)
        rules = await self.audit.rules()
        call.rule = verdict(rules, call.target, aliases)
        refused = None
        if call.asking and not _denies(call.rule) and tool.preview is not None:
            # Gathered before a rule decides: it may name more than the arguments do (an
            # install's version), and the rule must see that.
            shown = await tool.preview(params, call.ctx)
            if isinstance(shown, str):
                refused = shown
            else:
                call.preview = shown
                call.shown = {**call.shown, **self.redactor.value(shown)}
                if tool.refine is not None and call.target is not None:
                    aliases = [call.target, *aliases]
                    call.target = tool.refine(params, shown)
                    call.rule = verdict(rules, call.target, aliases)
        call.digest = digest(call.shown) if call.asking else None
        grants = call.ctx.caller.grants
        call.granted = (
            call.asking
            and call.rule is None
            and refused is None
            and grants is not None
            and grants.covers(call.name, call.target)
        )
        if _denies(call.rule):
            decision, decided_by = "rejected", _rule_name(call.rule)
        elif call.asking and call.rule is not None and refused is None:
            decision, decided_by = "approved", _rule_name(call.rule)
        elif call.granted:
            decision, decided_by = "approved", SESSION  # `Allow in this chat` covers it
        else:
            decision, decided_by = ("pending" if call.asking else "not_required"), None
        call.invocation = await self.audit.create(
            tool=call.name,
            origin=call.ctx.origin,
            arguments=call.shown,
            chat_id=call.ctx.chat_id,
            turn_id=call.ctx.turn_id,
            target=self.redactor(call.target) if call.target else None,
            approval_status=decision,
            decided_by=decided_by,
            digest=call.digest,
            parent=call.ctx.caller.parent,  # the running call this one was made from, if any
        )
        if _denies(call.rule):
            assert call.rule is not None
            return ToolResult.rejected(
                f"Tool call rejected: the owner's rule {call.rule.pattern!r} denies it."
            )
        if refused is not None:
            await self.audit.decide(call.invocation, "rejected", "preview", refused)
            return ToolResult.error(refused)
        return None

    async def approval(self, call: Call) -> ToolResult | None:
        """Ask the owner when the call needs it and no rule decided; then check that what
        would run is still what was shown (docs/reference/approvals.md)."""
        if not call.asking or call.rule is not None or call.granted:
            self._with_preview(call)  # not needed, or allowed by a rule or in this chat
            return None
        tool, params = call.the_tool, call.params
        pattern = tool.rule_for(params, call.target)
        if pattern is not None and self.redactor(pattern) != pattern:
            pattern = None  # a rule naming a secret would show it and store it: none offered
        grants, target = call.ctx.caller.grants, call.target
        # Offered where the owner chats, for calls a standing rule could allow (a coding
        # agent, a launch, a target naming a secret: none, they ask every time).
        in_chat = grants is not None and pattern is not None and target is not None
        request = ApprovalRequest(
            call.invocation,
            tool.name,
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
            grants.add(tool.name, target)
        if not await self._unchanged(call):
            await self.audit.started(call.invocation)
            await self.audit.finished(
                call.invocation, success=False, output=CHANGED, cost_estimate=0
            )
            return ToolResult.refused(CHANGED)
        self._with_preview(call)
        return None

    # -- the call --------------------------------------------------------------------------

    async def invoke(self, call: Call) -> ToolResult:
        tool = call.the_tool
        await self.audit.started(call.invocation)
        # The clock of a shown call starts here: time spent waiting for approval is not work.
        chat = call.ctx.chat_id
        board = self.progress if chat is not None else None  # no chat (CLI): nowhere to show
        if board is not None and chat is not None:
            board.started(call.invocation, chat, tool.name)
        # Only a stateful tool reports lines; a direct one shows its elapsed time alone.
        report = self._reporter(call, board) if tool.mode == "stateful" else None
        caller = call.ctx.caller.made_from(call.invocation)
        call.ctx = dataclasses.replace(call.ctx, caller=caller, report=report)
        outcome: Outcome = "cancelled"
        try:
            lock = contextlib.nullcontext() if tool.concurrency_safe(call.params) else self._unsafe
            async with lock:
                try:
                    result = await asyncio.wait_for(
                        tool.invoke(call.params, call.ctx), tool.timeout
                    )
                except TimeoutError:
                    result = ToolResult.error(
                        f"{tool.name} did not finish within {tool.timeout:g} s", ErrorKind.TIMEOUT
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
        """What this unit of work has now read, and from where (its taint)."""
        reading = call.ctx.caller.reading
        if reading is not None:
            reading.read(result.content, result.source)
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

    # -- helpers ---------------------------------------------------------------------------

    def _with_preview(self, call: Call) -> None:
        """The tool runs exactly what the owner saw (the preview), never a fresh fetch."""
        if call.preview is not None:
            call.ctx = dataclasses.replace(call.ctx, approved=call.preview)

    async def _unchanged(self, call: Call) -> bool:
        tool = call.the_tool
        if tool.preview is None:
            return True  # the validated arguments are all there is, and they are immutable
        now = await tool.preview(call.params, call.ctx)
        if isinstance(now, str):
            return False
        shown_now = {**self._shown(call), **self.redactor.value(now)}
        return digest(shown_now) == call.digest

    def _shown(self, call: Call) -> dict[str, Any]:
        """What an approval request shows of the call: its arguments, and why it asks when
        it could carry data out after outside content."""
        shown = self.redactor.value(call.args)
        if call.leak is not None:
            shown = {**shown, **self.redactor.value(call.leak)}
        return dict(shown)


_OUTCOMES: dict[Status, Outcome] = {Status.OK: "done", Status.REJECTED: "rejected"}


def _denies(rule: Rule | None) -> bool:
    return rule is not None and rule.effect == "deny"


def _rule_name(rule: Rule | None) -> str:
    return f"rule:{rule.id}" if rule else "rule"
