"""Running a skill's code: for real through the executor, or against test.json's canned answers.

A real run goes through `run_code` in a context whose caller names the skill (`…>skill:ID`)
and allows only the tools it declares, so every call passes validation, scope, rules,
approval and the audit like any other. A test
run binds `api.<tool>` to canned answers through the runtime alone: no executor, no tool ever
runs, nothing leaves the process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from augure.codemode import stubs
from augure.codemode.tool import describe_call, report, run_code
from augure.skills.model import (
    SKILL_PY,
    TEST_JSON,
    SkillError,
    SkillMeta,
    SkillTest,
    parse_test_json,
)
from augure.tools.base import RunContext, Tool, ToolResult
from augure.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from augure.codemode import runtime


@dataclass(frozen=True)
class RunResult:
    result: ToolResult
    calls: list[str]
    rejected: bool = False  # the owner (or a rule) said no to one of its calls

    @property
    def ok(self) -> bool:
        return self.result.success

    @property
    def output(self) -> str:
        return self.result.output


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    detail: str  # why it failed, or what it printed when it passed


async def run_skill_code(code: str, ctx: RunContext) -> RunResult:
    """Run a code skill in `ctx`, whose caller already names the skill and its tools."""
    run = await run_code(code, ctx)
    calls = [describe_call(c) for c in run.outcome.calls]
    return RunResult(report(run), calls, run.rejected)


async def check_files(
    meta: SkillMeta, files: dict[str, bytes], registry: ToolRegistry, limits: runtime.RunLimits
) -> CheckResult:
    """A code skill's test.json against its skill.py; an instruction skill has none."""
    if SKILL_PY not in files:
        return CheckResult(True, "instruction skill: nothing to run")
    if TEST_JSON not in files:
        return CheckResult(True, "no test.json: the code was not tested")
    try:
        test = parse_test_json(files[TEST_JSON].decode())
    except (SkillError, UnicodeDecodeError) as exc:
        return CheckResult(False, str(exc))
    code = files[SKILL_PY].decode()
    return await check_skill_code(code, meta.tools, test, registry, limits)


async def check_skill_code(
    code: str,
    tools: Sequence[str],
    test: SkillTest,
    registry: ToolRegistry,
    limits: runtime.RunLimits,
) -> CheckResult:
    """Run `code` with each declared tool answering from `test.answers`, then check the output."""
    # The runtime loads with the first snippet, not at the bot's start (docs/performance.md).
    from augure.codemode import runtime

    def canned(tool: Tool) -> runtime.ApiFunction:
        order = stubs.parameter_order(tool.parameters)
        names = {stubs.python_name(p): p for p in order}

        async def call(arguments: dict[str, Any]) -> str:
            # The arguments still have to be valid for the real tool: a test that passes with
            # calls the tool would refuse would prove nothing.
            args = {names.get(key, key): value for key, value in arguments.items()}
            checked = tool.validate(args)
            if isinstance(checked, str):
                raise runtime.CallFailed(checked)
            if tool.name not in test.answers:
                raise runtime.CallFailed(f"test.json has no canned answer for {tool.name}")
            return test.answers[tool.name]

        return runtime.ApiFunction([stubs.python_name(p) for p in order], call)

    functions = {}
    for name in tools:
        tool = registry.get(name)
        if tool is not None:
            functions[name] = canned(tool)
    outcome = await runtime.run(code, functions, limits)
    if not outcome.ok:
        where = f" on line {outcome.line}" if outcome.line else ""
        printed = f"\nPrinted before the error:\n{outcome.printed}" if outcome.printed else ""
        return CheckResult(False, f"the test run failed{where}: {outcome.error}{printed}")
    output = outcome.printed + (outcome.value or "")
    missing = [e for e in test.expect_output_contains if e not in output]
    if missing:
        shown = output.strip()[:1500] or "(nothing)"
        return CheckResult(
            False, f"the output lacks {', '.join(map(repr, missing))}; it printed:\n{shown}"
        )
    return CheckResult(True, output.strip())
