"""`execute_code`: the model writes Python that calls tools as `api.<tool>(...)`.

Every `api` call goes through the registry's executor with `origin="code"`, so validation,
policy, approval, redaction and the audit record apply exactly as in the chat. The snippet
runs in pydantic-monty (augure/codemode/runtime.py): no files, network or environment.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

from augure.codemode import stubs
from augure.tools.arguments import compact_schema
from augure.tools.base import (
    Artifact,
    Catalogue,
    RunContext,
    Tool,
    ToolResult,
    tool,
)
from augure.tools.result import Status, relayed_source

if TYPE_CHECKING:
    from augure.codemode import runtime
    from augure.tools.registry import ToolRegistry

NAME = "execute_code"
# Not reachable from code: execute_code itself (no recursion), load_tools, whose job
# (adding schemas to the request) means nothing when every stub is already listed, and
# batch, which code does better and which would count 25 calls as one of max_tool_calls.
EXCLUDED = frozenset({NAME, "load_tools", "batch"})
ARGUMENT_PREVIEW = 40  # characters of one argument shown in the list of calls made

DESCRIPTION = """\
Run Python code that calls tools as functions of the `api` module: \
`api.<tool>(param=value, ...)` is a plain call (no await) returning the tool's output as text, \
and raises ToolError (catch it with `except ToolError as e`) when the call fails or the owner \
rejects it; calls that need approval wait for it. What the code prints comes back, then the \
value of its last expression. Use it to chain several calls in one step and to filter or \
combine their results before they reach you. The language is a sandboxed Python subset: no \
files, network, environment or class inheritance; json, re, math, datetime, collections, \
itertools, random and base64 can be imported. Limits: {timeout:g} s of computation, \
{calls} tool calls per run. After an error you get the calls that already ran: do not \
repeat their side effects.
Functions:"""


@dataclass
class CodeRun:
    outcome: runtime.RunOutcome
    # Tools whose outside content entered the snippet: the output is labelled untrusted.
    untrusted: set[str] = field(default_factory=set)
    # Whether the owner (or a rule) said no to one of its calls: not the code's fault.
    rejected: bool = False
    # Files and images the calls produced (a screenshot...): delivered as from any tool.
    artifacts: list[Artifact] = field(default_factory=list)


def api_tools(registry: Catalogue, allowed: Collection[str] | None = None) -> list[Tool]:
    """The tools a snippet may call: the registry's, minus EXCLUDED, within `allowed`."""
    return [
        t
        for t in registry.list()
        if t.name not in EXCLUDED and (allowed is None or t.name in allowed)
    ]


def code_mode_schema(
    registry: ToolRegistry, allowed: Collection[str] | None = None
) -> dict[str, Any]:
    """The function schema of execute_code, its description carrying the `api` stubs of the
    tools within `allowed` (a guest's chat is not shown the owner's)."""
    assert registry.config is not None, "a registry a config built (build_registry)"
    limits = registry.config.code_mode
    listing = stubs.render(api_tools(registry, allowed), registry.description)
    header = DESCRIPTION.format(timeout=limits.timeout_seconds, calls=limits.max_tool_calls)
    return {
        "type": "function",
        "function": {
            "name": NAME,
            "description": f"{header}\n```python\n{listing}\n```",
            "parameters": execute_code.parameters,
        },
    }


async def run_code(code: str, ctx: RunContext) -> CodeRun:
    """Run `code` with `api` bound to the registry's tools (within what `ctx`'s caller may
    use), every call through the executor for that caller one link further (`…>code`).
    Budgets come from `[code_mode]`."""
    registry = ctx.registry
    if registry is None:
        raise RuntimeError("RunContext.registry is not set")
    # The runtime loads with the first snippet: most bots never run one (docs/performance.md).
    from augure.codemode import runtime

    inner = ctx.via("code")
    done = CodeRun(runtime.RunOutcome())

    def bridge(target: Tool) -> runtime.ApiFunction:
        order = _parameter_order(target.arguments_model)
        names = {stubs.python_name(p): p for p in order}

        async def call(arguments: dict[str, Any]) -> str:
            args = {names.get(key, key): value for key, value in arguments.items()}
            result = await inner.call(target.name, args)
            done.artifacts += result.artifacts
            if result.source is not None:
                done.untrusted.add(result.source)
            done.rejected |= result.status is Status.REJECTED
            if not result.success:
                raise runtime.CallFailed(result.content)
            return result.content

        return runtime.ApiFunction([stubs.python_name(p) for p in order], call)

    functions = {t.name: bridge(t) for t in api_tools(registry, inner.allowed_tools)}
    config = ctx.config.code_mode
    limits = runtime.RunLimits(config.timeout_seconds, config.max_tool_calls)
    done.outcome = await runtime.run(code, functions, limits)
    return done


def report(run: CodeRun) -> ToolResult:
    """The result the model reads: output and value, or the error, its line and the calls
    that already ran."""
    outcome = run.outcome
    printed = outcome.printed
    if outcome.printed_dropped:
        printed += f"\n[Printed output cut: {outcome.printed_dropped} more characters not shown.]"
    if outcome.ok:
        parts = [printed.rstrip("\n")] if printed else []
        if outcome.value is not None:
            parts.append(f"Result: {outcome.value}")
        text = "\n".join(parts) or (
            f"(The code ran and printed nothing; {len(outcome.calls)} tool calls.)"
        )
        return ToolResult.ok(text, run.artifacts, source=relayed_source(NAME, run.untrusted))

    error = outcome.error or "the code failed"
    lines = [f"line {outcome.line}: {error}" if outcome.line else error]
    if len(outcome.frames) > 1:
        lines.append("Traceback (most recent call last):")
        lines += [
            f"  line {f.line}, in {f.function or '<module>'}: {(f.source or '').strip()}"
            for f in outcome.frames
        ]
    if outcome.calls:
        lines.append("Tool calls that already ran (do not repeat their side effects):")
        lines += [f"  {n}. {describe_call(c)}" for n, c in enumerate(outcome.calls, 1)]
    else:
        lines.append("No tool call ran.")
    if printed:
        lines += ["Printed before the error:", printed.rstrip("\n")]
    return ToolResult.error(
        "\n".join(lines), artifacts=run.artifacts, source=relayed_source(NAME, run.untrusted)
    )


def describe_call(call: runtime.CallRecord) -> str:
    shown = ", ".join(f"{k}={_preview(v)}" for k, v in call.arguments.items())
    status = "ok" if call.ok else f"failed: {call.detail}"
    return f"{call.name}({shown}) → {status}"


@tool(
    NAME,
    # Never behind the executor's lock for writes: the calls inside take it one by one, and
    # holding it for the whole run would deadlock the first write.
    safe=True,
    # Approvals inside may each wait for the owner; the real budgets are [code_mode]'s.
    timeout=3600.0,
    relays=True,  # what the snippet prints may come from outside
)
async def execute_code(
    ctx: RunContext,
    code: Annotated[str, Field(description="Python calling api.<tool>(...); print results")],
) -> ToolResult:
    """Run Python code that calls tools as api.<tool>(...) and prints what you need."""
    if ctx.registry is None:
        return ToolResult.error("code mode needs the tool registry, which is not set")
    return report(await run_code(code, ctx))


@functools.cache
def _parameter_order(params: type[BaseModel]) -> list[str]:
    # Generating a JSON schema is slow next to a lookup; a tool's params model never changes.
    return stubs.parameter_order(compact_schema(params.model_json_schema()))


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= ARGUMENT_PREVIEW else f"{text[: ARGUMENT_PREVIEW - 1]}…"
