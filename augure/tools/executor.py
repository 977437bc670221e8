"""The one door to every tool: validate ▶ policy ▶ approval ▶ run ▶ guard ▶ redact ▶ label ▶ audit.

Chat turns, code mode, skills, jobs and `augure tools run` all call `Executor.run` with their
origin, so none of them can skip approval, redaction or the record.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from augure.approval.gate import ApprovalGate, ApprovalRequest
from augure.approval.rules import verdict
from augure.config import Config
from augure.secrets import Redactor
from augure.store.audit import Audit
from augure.tools.base import RunContext, Tool, ToolResult
from augure.tools.registry import ToolRegistry, enabled

log = logging.getLogger(__name__)

OUTPUT_LIMIT = 12_000  # characters of one result the model gets at once (~3,000 tokens)
UNTRUSTED_OPEN = '<untrusted_content source="{source}">'
UNTRUSTED_CLOSE = "</untrusted_content>"


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

        shown_args = self.redact.value(args)
        target = tool.target_for(params)
        rule = verdict(await self.audit.rules(), target)
        needs_approval = tool.needs_approval(params) and self.config.approval.enabled
        if rule is not None and rule.effect == "deny":
            approval, decided_by = "rejected", f"rule:{rule.id}"
        elif needs_approval and rule is not None:
            approval, decided_by = "approved", f"rule:{rule.id}"
        else:
            approval, decided_by = ("pending" if needs_approval else "not_required"), None
        invocation = await self.audit.create(
            tool=name,
            origin=ctx.origin,
            arguments=shown_args,
            chat_id=ctx.chat_id,
            turn_id=ctx.turn_id,
            target=target,
            approval_status=approval,
            decided_by=decided_by,
        )
        if rule is not None and approval == "rejected":
            denied = f"Tool call rejected: the owner's rule {rule.pattern!r} denies it."
            return ToolResult(False, denied)
        if approval == "pending" and tool.preview is not None:
            preview = await tool.preview(params, ctx)
            if isinstance(preview, str):
                await self.audit.decide(invocation, "rejected", "preview", preview)
                return ToolResult.error(preview)
            shown_args = {**shown_args, **self.redact.value(preview)}
        if approval == "pending":
            rejected = await self._ask(tool, params, invocation, shown_args, ctx)
            if rejected is not None:
                return rejected

        await self.audit.started(invocation)
        result = await self._invoke(tool, params, ctx)
        result.output = self.redact(result.output)
        await self.audit.finished(
            invocation,
            success=result.success,
            output=result.output,
            cost_estimate=len(result.output) // 4,
        )
        result.output = self._guard(result.output, invocation)
        if tool.untrusted:
            result.output = wrap_untrusted(result.output, name)
        return result

    async def _ask(
        self, tool: Tool, params: Any, invocation: str, shown_args: dict[str, Any], ctx: RunContext
    ) -> ToolResult | None:
        """Ask the owner. None when approved; otherwise the result the model receives."""
        pattern = tool.rule_for(params)
        request = ApprovalRequest(
            invocation, tool.name, shown_args, ctx.chat_id, ctx.origin, pattern
        )
        decision = await self.gate.request(request)
        if not decision.approved:
            return ToolResult(False, decision.message_for_model())
        if decision.always and pattern:
            await self.audit.add_rule("allow", pattern, decision.by)
        return None

    async def _invoke(self, tool: Tool, params: Any, ctx: RunContext) -> ToolResult:
        lock = contextlib.nullcontext() if tool.concurrency_safe(params) else self._unsafe
        async with lock:
            try:
                return await asyncio.wait_for(tool.invoke(params, ctx), tool.timeout)
            except TimeoutError:
                return ToolResult.error(f"{tool.name} did not finish within {tool.timeout:g} s")

    def _guard(self, output: str, invocation: str) -> str:
        """Cut an oversized result; the whole text stays readable with read_output."""
        if len(output) <= OUTPUT_LIMIT:
            return output
        self.outputs.mkdir(parents=True, exist_ok=True)
        saved = output_file(self.outputs, invocation)
        saved.write_text(output, encoding="utf-8")
        return (
            f"{output[:OUTPUT_LIMIT]}\n\n[Output cut: showing {OUTPUT_LIMIT} of {len(output)} "
            f'characters. Read on with read_output(id="{invocation}", offset={OUTPUT_LIMIT}).]'
        )


def output_file(outputs: Path, invocation: str) -> Path:
    return outputs / f"{invocation}.txt"


def wrap_untrusted(output: str, source: str) -> str:
    # Content may try to close the wrapper early and speak as the owner: defuse the tag.
    inner = output.replace("untrusted_content", "untrusted-content")
    return f"{UNTRUSTED_OPEN.format(source=source)}\n{inner}\n{UNTRUSTED_CLOSE}"


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
