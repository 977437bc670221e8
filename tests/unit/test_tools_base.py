import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field, model_validator

from augure.agent.history import INTERRUPTED, repair
from augure.approval.gate import ApprovalGate
from augure.config.settings import load_config
from augure.host.secrets import Redactor
from augure.memory.store import MemoryStore
from augure.store.audit import Audit
from augure.store.state import Store
from augure.tools.base import Egress, RunContext, ToolResult, tool
from augure.tools.executor import Executor
from augure.tools.registry import ToolRegistry


@tool("add", egress=Egress.READ_ONLY, hint="adds numbers")
async def add(
    ctx: RunContext,
    a: Annotated[int, Field(description="first number")],
    b: int = 2,
    label: str | None = None,
) -> str:
    """Add two numbers."""
    return f"{label or 'sum'}={a + b}"


@tool("explode")
async def explode(ctx: RunContext) -> ToolResult:
    """Always fails."""
    raise RuntimeError("boom")


def test_schema_is_generated_from_type_hints() -> None:
    assert add.description == "Add two numbers."
    assert add.parameters == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "first number"},
            "b": {"type": "integer", "default": 2},
            "label": {"type": "string"},
        },
        "required": ["a"],
    }
    assert add.approval.egress is Egress.READ_ONLY


@tool("post")
async def post(
    ctx: RunContext,
    items: Any,
    body: str | dict[str, Any] | list[Any] | None = None,
    extra: dict[str, int] | None = None,
) -> str:
    """Post anything."""
    return "posted"


def test_schema_spells_out_no_json_schema_default() -> None:
    """Sent with every request: "any key" and "items of any type" are the defaults already,
    and extra parameters are refused by validation whether or not the schema says so."""
    assert post.parameters == {
        "type": "object",
        "properties": {
            "items": {},  # a parameter named like the keyword keeps its (empty) schema
            "body": {"anyOf": [{"type": "string"}, {"type": "object"}, {"type": "array"}]},
            "extra": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "required": ["items"],
    }
    assert isinstance(post.validate({"items": 1, "surprise": 1}), str)


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[RunContext]:
    config = load_config(home=tmp_path)
    store = await Store.open(tmp_path / "state.db")
    registry = ToolRegistry(config)
    registry.register(add)
    registry.register(explode)
    audit = Audit(store)
    gate = ApprovalGate(audit, timeout_seconds=1)
    executor = Executor(registry, audit, gate, config, Redactor({}))
    memory = MemoryStore(tmp_path / "memory")
    yield RunContext(config, memory, store, registry=registry, execute=executor.run)
    await store.close()


async def test_execute_validates_and_reports_errors_as_results(ctx: RunContext) -> None:
    assert (await ctx.call("add", '{"a": 1}')).output == "sum=3"
    bad_json = await ctx.call("add", '{"a": 1')
    assert not bad_json.success and "not valid JSON" in bad_json.output
    wrong_type = await ctx.call("add", {"a": "one"})
    assert not wrong_type.success and "a:" in wrong_type.output
    extra = await ctx.call("add", {"a": 1, "c": 3})
    assert not extra.success and "unexpected parameter" in extra.output
    unknown = await ctx.call("nope", {})
    assert not unknown.success and "available: add, explode" in unknown.output
    assert unknown.prunable and bad_json.prunable and wrong_type.prunable
    raised = await ctx.call("explode", {})
    assert not raised.success and "RuntimeError: boom" in raised.output
    registry = ctx.registry
    assert registry is not None and registry.hints() == ["add: adds numbers"]


def test_registering_a_name_twice_is_an_error() -> None:
    registry = ToolRegistry()
    registry.register(add)
    with pytest.raises(ValueError, match="twice"):
        registry.register(add)


def test_repair_gives_every_tool_call_a_result() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "user", "content": "again"},
        {"role": "tool", "tool_call_id": "zz", "content": "orphan"},
    ]
    repaired = repair(messages)
    assert repaired[2] == {"role": "tool", "tool_call_id": "c1", "content": INTERRUPTED}
    assert repaired[3]["content"] == "again"
    assert all(m.get("tool_call_id") != "zz" for m in repaired)


@tool("titled")
async def titled(ctx: RunContext, title: str, tags: list[str] | str | None = None) -> str:
    """A tool with a parameter named like pydantic's metadata."""
    return title


def test_a_parameter_named_title_survives_and_optional_unions_drop_null() -> None:
    schema = titled.parameters
    assert schema["properties"]["title"] == {"type": "string"}
    assert schema["required"] == ["title"]
    assert schema["properties"]["tags"] == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]
    }


def test_a_tools_argument_model_is_built_on_first_use_with_its_added_validators() -> None:
    built: list[str] = []

    @tool("halve")
    async def halve(ctx: RunContext, n: int) -> str:
        """Halve an even number."""
        return str(n // 2)

    def even(params: Any) -> Any:
        built.append("validator")
        if params.n % 2:
            raise ValueError("n must be even")
        return params

    halve.validated_by("_even", model_validator(mode="after")(even))
    assert "params" not in vars(halve)  # nothing built by declaring the tool
    assert halve.parameters["required"] == ["n"]
    assert halve.validate({"n": 4}).n == 2 * 2  # type: ignore[union-attr]
    assert "n must be even" in str(halve.validate({"n": 3}))
    assert built == ["validator", "validator"]


def test_importing_every_tool_builds_none_of_their_argument_models() -> None:
    # What `augure run` imports, in a fresh interpreter: the models wait for the first turn.
    probe = (
        "import gc, augure.cli.main, augure.core.app, augure.channels.telegram.bot\n"
        "from augure.tools.base import Tool\n"
        "tools = [o for o in gc.get_objects() if isinstance(o, Tool)]\n"
        "print(len(tools), sum('params' in vars(t) for t in tools))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    declared, built = map(int, result.stdout.split())
    assert declared > 10
    assert built == 0
