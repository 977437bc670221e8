"""The one door to every tool: validate ▶ policy ▶ approval ▶ run ▶ guard ▶ redact ▶ label ▶ audit.

Chat turns, code mode, skills, jobs and `augure tools run` all call `Executor.run` with their
origin, so none of them can skip approval, redaction or the record.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from augure.approval.gate import ApprovalGate, ApprovalRequest
from augure.approval.rules import verdict
from augure.approval.shown import digest
from augure.config import Config
from augure.secrets import Redactor
from augure.store.audit import Audit, Rule
from augure.tools.base import RunContext, Tool, ToolResult
from augure.tools.registry import ToolRegistry, enabled

log = logging.getLogger(__name__)

OUTPUT_LIMIT = 12_000  # characters of one result the model gets at once (~3,000 tokens)
UNTRUSTED_OPEN = '<untrusted_content source="{source}">'
UNTRUSTED_CLOSE = "</untrusted_content>"
CHANGED = (
    "Tool call refused: what would run changed between the approval request and the press; "
    "nothing was run. Ask again to see what would run now."
)
# The tag's name in any letter case: the content must not be able to close the marker.
_TAG_NAME = re.compile("untrusted_content", re.IGNORECASE)


@dataclasses.dataclass
class _Policy:
    shown_args: dict[str, Any]  # what an approval request shows: redacted, with the preview
    target: str | None
    rule: Rule | None = None
    preview: dict[str, Any] | None = None
    refused: str | None = None  # the preview's reason to refuse the call unasked

    @property
    def denied(self) -> bool:
        return self.rule is not None and self.rule.effect == "deny"


class Executor:
    def __init__(
        self,
        registry: ToolRegistry,
        audit: Audit,
        gate: ApprovalGate,
        config: Config,
        redactor: Redactor,
    ) -> None:
        self.registry = registry
        self.audit = audit
        self.gate = gate
        self.config = config
        self.redact = redactor
        self.outputs = config.home / "outputs"
        # Calls that are not concurrency-safe (writes, mostly) run one at a time, app-wide.
        self._unsafe = asyncio.Lock()

    async def run_calls(
        self, calls: Sequence[tuple[str, str | dict[str, Any]]], ctx: RunContext
    ) -> list[ToolResult]:
        """The calls of one model response: concurrently where safe, results in their order."""
        return list(await asyncio.gather(*(self.run(name, args, ctx) for name, args in calls)))

    async def run(self, name: str, arguments: str | dict[str, Any], ctx: RunContext) -> ToolResult:
        tool = self.registry.get(name)
        if tool is None:
            known = ", ".join(sorted(t.name for t in self.registry.list()))
            return ToolResult.error(f"unknown tool {name!r}; available: {known}", prunable=True)
        args = _parse(name, arguments)
        if isinstance(args, ToolResult):
            return args
        params = tool.validate(args)
        if isinstance(params, str):
            return ToolResult.error(params, prunable=True)
        if not enabled(name, self.config):
            return ToolResult.error(f"{name} is disabled by the owner's [tools] configuration")
        if ctx.allowed_tools is not None and name not in ctx.allowed_tools:
            allowed = ", ".join(sorted(ctx.allowed_tools)) or "none"
            return ToolResult.error(f"{name} is not among the tools declared here ({allowed})")

        needs_approval = tool.needs_approval(params) and self.config.approval.enabled
        policy = await self._policy(tool, params, args, ctx, needs_approval)
        rule, shown_args, preview = policy.rule, policy.shown_args, policy.preview
        if policy.denied:
            approval, decided_by = "rejected", f"rule:{rule.id}" if rule else "rule"
        elif needs_approval and rule is not None and policy.refused is None:
            approval, decided_by = "approved", f"rule:{rule.id}"
        else:
            approval, decided_by = ("pending" if needs_approval else "not_required"), None
        approved_digest = digest(shown_args) if needs_approval else None
        invocation = await self.audit.create(
            tool=name,
            origin=ctx.origin,
            arguments=shown_args,
            chat_id=ctx.chat_id,
            turn_id=ctx.turn_id,
            target=policy.target,
            approval_status=approval,
            decided_by=decided_by,
            digest=approved_digest,
        )
        if policy.denied and rule is not None:
            denied_text = f"Tool call rejected: the owner's rule {rule.pattern!r} denies it."
            return ToolResult(False, denied_text)
        if policy.refused is not None:
            await self.audit.decide(invocation, "rejected", "preview", policy.refused)
            return ToolResult.error(policy.refused)
        if approval == "pending":
            assert approved_digest is not None
            rejected = await self._ask(tool, params, invocation, shown_args, ctx, policy.target)
            if rejected is not None:
                return rejected
            if not await self._unchanged(tool, params, args, ctx, approved_digest):
                await self.audit.started(invocation)
                await self.audit.finished(
                    invocation, success=False, output=CHANGED, cost_estimate=0
                )
                return ToolResult(False, CHANGED)
        if preview is not None:
            ctx = dataclasses.replace(ctx, approved=preview)

        await self.audit.started(invocation)
        result = await self._invoke(tool, params, ctx)
        result.output = self.redact(result.output)
        await self.audit.finished(
            invocation,
            success=result.success,
            output=result.output,
            cost_estimate=len(result.output) // 4,
        )
        source = name if tool.untrusted else result.untrusted_source
        result.output = self._guard(result.output, invocation, source)
        if source is not None:
            result.output = wrap_untrusted(result.output, source)
        return result

    async def _policy(
        self, tool: Tool, params: Any, args: dict[str, Any], ctx: RunContext, asking: bool
    ) -> _Policy:
        """The owner's rules on the call's target (every spelling of it), and what a request
        would show: the preview is gathered before any rule decides, because it may name
        more than the arguments do (an install's version) and the rule must see that."""
        policy = _Policy(self.redact.value(args), tool.target_for(params))
        aliases = tool.aliases_for(params, self.config)
        rules = await self.audit.rules()
        policy.rule = verdict(rules, policy.target, aliases)
        if not asking or policy.denied or tool.preview is None:
            return policy
        shown = await tool.preview(params, ctx)
        if isinstance(shown, str):
            policy.refused = shown
            return policy
        policy.preview = shown
        policy.shown_args = {**policy.shown_args, **self.redact.value(shown)}
        if tool.refine is not None and policy.target is not None:
            aliases = [policy.target, *aliases]
            policy.target = tool.refine(params, shown)
            policy.rule = verdict(rules, policy.target, aliases)
        return policy

    async def _ask(
        self,
        tool: Tool,
        params: Any,
        invocation: str,
        shown_args: dict[str, Any],
        ctx: RunContext,
        target: str | None,
    ) -> ToolResult | None:
        """Ask the owner. None when approved; otherwise the result the model receives."""
        pattern = tool.rule_for(params, target)
        request = ApprovalRequest(
            invocation, tool.name, shown_args, ctx.chat_id, ctx.origin, pattern, digest(shown_args)
        )
        decision = await self.gate.request(request)
        if not decision.approved:
            return ToolResult(False, decision.message_for_model())
        if decision.always and pattern:
            await self.audit.add_rule("allow", pattern, decision.by)
        return None

    async def _unchanged(
        self, tool: Tool, params: Any, args: dict[str, Any], ctx: RunContext, approved: str
    ) -> bool:
        """After the press: is what would run now what was shown? (SPEC §4)"""
        if tool.preview is None:
            return True  # the validated arguments are all there is, and they are immutable
        now = await tool.preview(params, ctx)
        if isinstance(now, str):
            return False
        return digest({**self.redact.value(args), **self.redact.value(now)}) == approved

    async def _invoke(self, tool: Tool, params: Any, ctx: RunContext) -> ToolResult:
        lock = contextlib.nullcontext() if tool.concurrency_safe(params) else self._unsafe
        async with lock:
            try:
                return await asyncio.wait_for(tool.invoke(params, ctx), tool.timeout)
            except TimeoutError:
                return ToolResult.error(f"{tool.name} did not finish within {tool.timeout:g} s")

    def _guard(self, output: str, invocation: str, source: str | None) -> str:
        """Cut an oversized result; the whole text stays readable with read_output, and
        stays marked untrusted when it came from outside (`source`)."""
        if len(output) <= OUTPUT_LIMIT:
            return output
        self.outputs.mkdir(parents=True, exist_ok=True)
        saved = output_file(self.outputs, invocation)
        if source is not None:
            source_file(self.outputs, invocation).write_text(source, encoding="utf-8")
        saved.write_text(output, encoding="utf-8")
        return (
            f"{output[:OUTPUT_LIMIT]}\n\n[Output cut: showing {OUTPUT_LIMIT} of {len(output)} "
            f'characters. Read on with read_output(id="{invocation}", offset={OUTPUT_LIMIT}).]'
        )


def output_file(outputs: Path, invocation: str) -> Path:
    return outputs / f"{invocation}.txt"


def source_file(outputs: Path, invocation: str) -> Path:
    """Beside a saved output: the tool whose outside content it is (absent when trusted)."""
    return outputs / f"{invocation}.source"


def wrap_untrusted(output: str, source: str) -> str:
    # Content may try to close the wrapper early and speak as the owner: defuse the tag,
    # in every letter case (a model reads </UNTRUSTED_CONTENT> as the same tag).
    inner = _TAG_NAME.sub("untrusted-content", output)
    return f"{UNTRUSTED_OPEN.format(source=source)}\n{inner}\n{UNTRUSTED_CLOSE}"


def outside_sources(messages: Sequence[dict[str, Any]], registry: ToolRegistry) -> list[str]:
    """Tools called in `messages` whose results bring (or pass on) outside content: text
    derived from these messages, such as a summary, must stay marked untrusted."""
    called = {
        call["function"]["name"]
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
    }
    found = []
    for name in sorted(called):
        tool = registry.get(name)
        if tool is None or tool.untrusted or tool.relays:  # unknown: assume the worst
            found.append(name)
    return found


def _parse(name: str, arguments: str | dict[str, Any]) -> dict[str, Any] | ToolResult:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return ToolResult.error(
            f"arguments for {name} are not valid JSON ({exc.msg})", prunable=True
        )
    if not isinstance(parsed, dict):
        return ToolResult.error(f"arguments for {name} must be a JSON object", prunable=True)
    return parsed
