"""The gates of the executor's pipeline that decide on a call before it runs: each reads the
call's `Caller` and either lets it on or ends it with a result of its own
(docs/architecture.md, "The executor is a list of named steps", lists them in order).

`release`, which hands the rest of the pipeline to a background task, is the executor's own:
it needs the pipeline itself."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from augure.approval.gate import ApprovalGate, ApprovalRequest
from augure.approval.shown import digest
from augure.config.settings import Config
from augure.host.secrets import Redactor
from augure.store.audit import Audit
from augure.tools import leaks, stays
from augure.tools.call import Call, parsed
from augure.tools.limits import Limits
from augure.tools.policy import Decisions, denies
from augure.tools.registry import ToolRegistry, enabled
from augure.tools.result import ErrorKind, ToolResult

CHANGED = (
    "Tool call refused: what would run changed between the approval request and the press; "
    "nothing was run. Ask again to see what would run now."
)


@dataclass(kw_only=True)
class Gates:
    """parse, validate, scope, limits, egress, policy, approval: one method each."""

    registry: ToolRegistry
    audit: Audit
    approvals: ApprovalGate
    config: Config
    redactor: Redactor
    limits: Limits
    decisions: Decisions
    # Why a tool the registry lacks cannot be called (an MCP server down); None: unknown.
    absent: Callable[[str], str | None] | None

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
