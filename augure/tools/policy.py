"""The approval policy's decisions about one call, one each: whether it asks, the owner's
rule on its target (every spelling of it), what a request shows, whether `Allow in this
chat` covers it, the audit record it starts with, and whether what would run is still what
was shown. The executor's `policy` and `approval` steps take them in order
(docs/architecture.md, "The executor is a list of named steps")."""

from __future__ import annotations

import dataclasses
from typing import Any

from augure.approval.rules import verdict
from augure.approval.shown import digest
from augure.config.settings import Config
from augure.host.secrets import Redactor
from augure.store.audit import SESSION, Audit, Rule
from augure.tools.call import Call


class Decisions:
    def __init__(self, config: Config, audit: Audit, redactor: Redactor) -> None:
        self.config = config
        self.audit = audit
        self.redactor = redactor

    def asks(self, call: Call) -> bool:
        """Whether the call needs the owner: by the tool's own nature (when approval is on),
        because a profile says so, or because it could carry data out after outside content."""
        needed = call.the_tool.approval.needed(call.arguments, self.config)
        leaking = call.leak is not None
        return (needed and self.config.approval.enabled) or call.profile_asks or leaking

    async def match_rules(self, call: Call) -> None:
        """The owner's rule on the call's target, any of its spellings matching. A call that
        asks gathers its preview first: it may name more than the arguments do (an install's
        version), and the rule must see that."""
        approval, arguments = call.the_tool.approval, call.arguments
        call.target = approval.target_for(arguments)
        aliases = approval.aliases_for(arguments, self.config)
        rules = await self.audit.rules()
        call.rule = verdict(rules, call.target, aliases)
        if not call.asking or denies(call.rule) or approval.preview is None:
            return
        shown = await approval.preview(arguments, call.ctx)
        if isinstance(shown, str):
            call.refused = shown
            return
        call.preview = shown
        call.shown = {**call.shown, **self.redactor.value(shown)}
        if approval.refine is not None and call.target is not None:
            aliases = [call.target, *aliases]
            call.target = approval.refine(arguments, shown)
            call.rule = verdict(rules, call.target, aliases)

    def granted_in_chat(self, call: Call) -> bool:
        """Covered by `Allow in this chat` for this caller: only when no rule decided."""
        grants = call.ctx.caller.grants
        undecided = call.asking and call.rule is None and call.refused is None
        return undecided and grants is not None and grants.covers(call.name, call.target)

    def decision(self, call: Call) -> tuple[str, str | None]:
        """The approval status the audit record starts with, and who decided it."""
        if denies(call.rule):
            return "rejected", rule_name(call.rule)
        if call.asking and call.rule is not None and call.refused is None:
            return "approved", rule_name(call.rule)
        if call.granted:
            return SESSION, SESSION
        return ("pending" if call.asking else "not_required"), None

    async def recorded(self, call: Call, decision: str, decided_by: str | None) -> str:
        return await self.audit.create(
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

    def offered_rule(self, call: Call) -> str | None:
        """The rule "Always allow" would save; none when it would name a secret (it would
        show it and store it)."""
        pattern = call.the_tool.approval.rule_for(call.arguments, call.target)
        if pattern is not None and self.redactor(pattern) != pattern:
            return None
        return pattern

    def with_preview(self, call: Call) -> None:
        """The tool runs exactly what the owner saw (the preview), never a fresh fetch."""
        if call.preview is not None:
            call.ctx = dataclasses.replace(call.ctx, approved=call.preview)

    async def unchanged(self, call: Call) -> bool:
        preview = call.the_tool.approval.preview
        if preview is None:
            return True  # the validated arguments are all there is, and they are immutable
        now = await preview(call.arguments, call.ctx)
        if isinstance(now, str):
            return False
        shown_now = {**self.shown(call), **self.redactor.value(now)}
        return digest(shown_now) == call.digest

    def shown(self, call: Call) -> dict[str, Any]:
        """What an approval request shows of the call: its arguments, and why it asks when
        it could carry data out after outside content."""
        shown = self.redactor.value(call.raw)
        if call.leak is not None:
            shown = {**shown, **self.redactor.value(call.leak)}
        return dict(shown)


def denies(rule: Rule | None) -> bool:
    return rule is not None and rule.effect == "deny"


def rule_name(rule: Rule | None) -> str:
    return f"rule:{rule.id}" if rule else "rule"
