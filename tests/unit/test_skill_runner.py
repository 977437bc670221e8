"""A skill's test run: canned answers only, checked against the real tools' parameters."""

from __future__ import annotations

from augure.codemode.runtime import RunLimits
from augure.skills.model import SkillTest
from augure.skills.runner import CheckResult, check_skill_code
from augure.tools.clock import datetime_tool
from augure.tools.memory_tools import memory_read, memory_write
from augure.tools.registry import ToolRegistry

LIMITS = RunLimits(timeout_seconds=10, max_calls=10)


def registry() -> ToolRegistry:
    tools = ToolRegistry()
    for tool in (datetime_tool, memory_read, memory_write):
        tools.register(tool)
    return tools


async def check(
    code: str, tools: list[str], answers: dict[str, str], expect: list[str]
) -> CheckResult:
    test = SkillTest(answers, tuple(expect))
    return await check_skill_code(code, tools, test, registry(), LIMITS)


async def test_a_passing_test_prints_what_was_expected() -> None:
    result = await check(
        'print("today:", api.datetime(), api.memory_read("todo.md"))',
        ["datetime", "memory_read"],
        {"datetime": "Monday", "memory_read": "milk"},
        ["today: Monday milk"],
    )
    assert result.passed and result.detail == "today: Monday milk"


async def test_failures_say_why() -> None:
    missing = await check('print("hi")', [], {}, ["bye"])
    assert (
        not missing.passed and "the output lacks 'bye'" in missing.detail and "hi" in missing.detail
    )
    # Arguments the real tool would refuse fail the test, canned answer or not.
    bad_args = await check(
        'api.memory_write(path="a.md")', ["memory_write"], {"memory_write": "ok"}, []
    )
    assert not bad_args.passed and "content: Field required" in bad_args.detail
    no_answer = await check("api.datetime()", ["datetime"], {}, [])
    assert (
        not no_answer.passed and "test.json has no canned answer for datetime" in no_answer.detail
    )
    # A tool the skill did not declare does not exist for it, even with a canned answer.
    undeclared = await check('api.memory_read("x")', ["datetime"], {"memory_read": "x"}, [])
    assert not undeclared.passed and "has no attribute 'memory_read'" in undeclared.detail
    crashed = await check("1 / 0", [], {}, [])
    assert (
        not crashed.passed and "ZeroDivisionError" in crashed.detail and "line 1" in crashed.detail
    )
