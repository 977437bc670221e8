"""Code mode: stubs from schemas, the monty runtime and its budgets, execute_code through the
real executor, and escape attempts. Every snippet here runs in a real pydantic-monty worker."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from augure.approval.gate import ApprovalGate, ApprovalRequest, Decide, Decision, Verdict
from augure.codemode import runtime, stubs
from augure.codemode.tool import code_mode_schema, execute_code
from augure.common.caller import Caller
from augure.config.settings import load_config
from augure.core.toolset import build_registry
from augure.host.secrets import Redactor
from augure.memory.store import MemoryStore
from augure.store.audit import Audit
from augure.store.state import Store
from augure.tools.base import Artifact, Egress, RunContext, Tool, ToolResult, tool
from augure.tools.executor import Executor
from augure.tools.memory_tools import memory_write
from augure.tools.registry import ToolRegistry

# ---------------------------------------------------------------- test tools


@tool("send", egress=Egress.WRITE, target=lambda p: f"send:to={p.to}")
async def send(ctx: RunContext, to: str, text: str) -> str:
    """Send a message (needs approval)."""
    (ctx.home / "sent.jsonl").open("a").write(json.dumps({"to": to, "text": text}) + "\n")
    return f"sent to {to}"


@tool("page", egress=Egress.READ_ONLY, untrusted=True)
async def page(ctx: RunContext, url: str) -> str:
    """Fetch a page (outside content)."""
    return json.dumps({"url": url, "title": "Hello"})


@tool("snap", egress=Egress.READ_ONLY)
async def snap(ctx: RunContext, name: str) -> ToolResult:
    """Take a picture."""
    return ToolResult.ok(f"took {name}", [Artifact("image", f"{name}.png", b"png")])


@tool("kinds")
async def kinds(
    ctx: RunContext,
    action: Annotated[Literal["list", "get"], Field(description="what to do")],
    labels: list[str] | None = None,
    limit: int = 5,
    draft: bool = False,
) -> str:
    """Exercise the type mapping. Second sentence."""
    return f"{action} {labels} {limit} {draft}"


class _MailParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sender: str = Field(alias="from")


async def _mail(ctx: RunContext, sender: str) -> str:
    return f"from={sender}"


mail = Tool("mail", "Mail with a keyword parameter.", _MailParams, _mail)


class Owner:
    """An approver that answers every request with the next scripted decision; with none
    scripted it cannot be reached."""

    name = "owner"

    def __init__(self) -> None:
        self.decisions: list[Decision] = []
        self.asked: list[ApprovalRequest] = []

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any] | None:
        if not self.decisions:
            raise LookupError("no answer scripted")
        self.asked.append(request)
        decision = self.decisions.pop(0)
        asyncio.get_running_loop().call_soon(
            lambda: asyncio.ensure_future(decide(decision, "owner"))
        )
        return None

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        return None


@pytest.fixture
def owner() -> Owner:
    return Owner()


@pytest.fixture
async def app(
    tmp_path: Path, owner: Owner
) -> AsyncIterator[tuple[ToolRegistry, RunContext, Audit]]:
    config = load_config(home=tmp_path)
    config.code_mode.timeout_seconds = 2.0
    config.code_mode.max_tool_calls = 5
    store = await Store.open(tmp_path / "state.db")
    registry = build_registry(config, [execute_code, send, page, kinds, mail, snap])
    audit = Audit(store)
    gate = ApprovalGate(audit, timeout_seconds=5, approvers=[owner])
    run = Executor(registry, audit, gate, config, Redactor({})).run
    memory = MemoryStore(tmp_path / "memory")
    memory.ensure()
    ctx = RunContext(
        config, memory, store, Caller.of("chat", chat_id="c1"), registry=registry, execute=run
    )
    yield registry, ctx, audit
    await store.close()


async def code(registry: ToolRegistry, ctx: RunContext, snippet: str) -> ToolResult:
    """execute_code as the model calls it: through the executor, like any tool."""
    return await ctx.call("execute_code", {"code": snippet})


# ---------------------------------------------------------------- stubs


def test_stub_is_a_typed_signature_with_the_description() -> None:
    assert stubs.stub(memory_write) == (
        "def memory_write(path: str, content: str) -> str:\n"
        '    """Create or replace a markdown memory file; read it first to keep what it holds.\n'
        "    path: relative to memory/, e.g. people.md\n"
        '    content: the whole new file"""'
    )


def test_stub_maps_json_schema_types_and_orders_required_first() -> None:
    text = stubs.stub(kinds)
    assert text.startswith(
        "def kinds(action: Literal['list', 'get'], labels: list[str] | None = None, "
        "limit: int = 5, draft: bool = False) -> str:"
    )
    assert "action: what to do" in text
    assert stubs.stub(kinds, brief=True).endswith('"""Exercise the type mapping."""')
    assert stubs.annotation({"anyOf": [{"type": "array", "items": {"type": ["integer", "string"]}},
                                        {"type": "null"}]}) == "list[int | str] | None"  # fmt: skip
    assert stubs.annotation({"type": "object", "additionalProperties": {"type": "number"}}) == (
        "dict[str, float]"
    )
    assert stubs.stub(mail).startswith("def mail(from_: str) -> str:")


async def test_schema_lists_every_reachable_tool_but_not_itself(
    app: tuple[ToolRegistry, RunContext, Audit],
) -> None:
    registry, _, _ = app
    schema = code_mode_schema(registry)
    function = schema["function"]
    assert function["name"] == "execute_code"
    assert function["parameters"]["required"] == ["code"]
    description = function["description"]
    for name in ("memory_read", "memory_write", "datetime", "read_output", "send", "page"):
        assert f"def {name}(" in description
    assert "def execute_code(" not in description and "def load_tools(" not in description
    # A batch inside a snippet would count as one call of [code_mode] max_tool_calls.
    assert "def batch(" not in description
    assert "2 s of computation, 5 tool calls" in description
    compile(description.split("```python\n")[1].split("```")[0], "stubs", "exec")


# ---------------------------------------------------------------- runtime


def echo(params: list[str]) -> runtime.ApiFunction:
    async def call(arguments: dict[str, Any]) -> str:
        if arguments.get("fail"):
            raise runtime.CallFailed("it broke")
        return json.dumps(arguments, sort_keys=True)

    return runtime.ApiFunction(params, call)


async def run(snippet: str, *, timeout: float = 2.0, calls: int = 5) -> runtime.RunOutcome:
    functions = {"echo": echo(["a", "b", "fail"])}
    return await runtime.run(snippet, functions, runtime.RunLimits(timeout, calls))


async def test_printed_output_and_last_value_come_back() -> None:
    outcome = await run("x = api.echo(1, b='two')\nprint('got', x)\n[x, 2 + 3]")
    assert outcome.ok
    assert outcome.printed == 'got {"a": 1, "b": "two"}\n'
    assert outcome.value == '[\'{"a": 1, "b": "two"}\', 5]'
    assert [c.name for c in outcome.calls] == ["echo"] and outcome.calls[0].ok


async def test_a_failed_call_raises_tool_error_the_code_can_catch() -> None:
    caught = await run(
        "try:\n    api.echo(fail=True)\nexcept ToolError as e:\n    print('caught:', e)\n'after'"
    )
    assert caught.ok and caught.printed == "caught: echo: it broke\n" and caught.value == "after"
    uncaught = await run("api.echo(a=1)\n\napi.echo(fail=True)\n")
    assert uncaught.error == "ToolError: echo: it broke" and uncaught.line == 3
    assert [(c.ok, c.detail) for c in uncaught.calls] == [(True, ""), (False, "it broke")]


async def test_syntax_and_runtime_errors_report_their_line() -> None:
    syntax = await run("x = 1\ny = (\n")
    assert syntax.error is not None and syntax.error.startswith("SyntaxError")
    assert syntax.line == 3 and not syntax.calls
    nested = await run("def f(x):\n    return 1 / x\n\nf(0)")
    assert nested.error == "ZeroDivisionError: division by zero"
    assert [(f.line, f.function) for f in nested.frames] == [(4, "<module>"), (2, "f")]


async def test_bad_arguments_are_a_type_error_in_the_code() -> None:
    outcome = await run("api.echo(1, 2, 3, 4)")
    assert outcome.error is not None and "takes 3 positional arguments but 4" in outcome.error
    twice = await run("api.echo(1, a=2)")
    assert twice.error is not None and "multiple values for argument 'a'" in twice.error
    assert not outcome.calls and not twice.calls


async def test_max_tool_calls_stops_the_run_and_lists_the_calls_made() -> None:
    snippet = (
        "for i in range(10):\n    try:\n        api.echo(a=i)\n    except Exception:\n        pass"
    )
    outcome = await run(snippet, calls=3)
    assert outcome.error is not None and "code_mode.max_tool_calls (3) reached" in outcome.error
    assert outcome.line == 3
    assert [c.arguments for c in outcome.calls] == [{"a": 0}, {"a": 1}, {"a": 2}]


async def test_an_endless_loop_times_out() -> None:
    for snippet in (
        "while True:\n    pass",
        # The time limit is not an exception the code can swallow.
        "while True:\n    try:\n        while True:\n            pass\n    except Exception:\n"
        "        pass",
    ):
        started = time.monotonic()
        outcome = await run(snippet, timeout=0.5)
        assert outcome.error is not None and outcome.error.startswith("TimeoutError"), snippet
        assert time.monotonic() - started < 5


async def test_a_huge_print_is_capped() -> None:
    outcome = await run("for i in range(200000):\n    print('line', i)\n'done'")
    assert outcome.ok and outcome.value == "done"
    assert len(outcome.printed) == runtime.PRINT_LIMIT
    assert outcome.printed_dropped > 1_000_000
    huge_value = await run("'y' * 1000000")
    assert huge_value.value is not None and len(huge_value.value) < runtime.VALUE_LIMIT + 100


async def test_cancelling_a_run_cancels_the_call_in_flight() -> None:
    entered, cancelled = asyncio.Event(), asyncio.Event()

    async def hang(arguments: dict[str, Any]) -> str:
        entered.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    task = asyncio.create_task(
        runtime.run("api.hang()", {"hang": runtime.ApiFunction([], hang)}, runtime.RunLimits(5, 5))
    )
    await asyncio.wait_for(entered.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cancelled.wait(), 5)


async def test_time_spent_in_tool_calls_does_not_count_against_the_timeout() -> None:
    # An approval can take minutes; only the snippet's own computation is limited.
    async def slow(arguments: dict[str, Any]) -> str:
        await asyncio.sleep(0.6)
        return "late"

    functions = {"slow": runtime.ApiFunction([], slow)}
    outcome = await runtime.run("api.slow()", functions, runtime.RunLimits(0.3, 5))
    assert outcome.ok and outcome.value == "late"
    assert await runtime.check() is None


async def test_the_api_module_imports_like_a_module() -> None:
    outcome = await run("import api as a\nfrom api import echo\n[a.echo(a=1), echo(a=2)]")
    assert outcome.value == "['{\"a\": 1}', '{\"a\": 2}']"


# ---------------------------------------------------------------- execute_code


async def test_three_tools_in_one_snippet_through_the_executor(
    app: tuple[ToolRegistry, RunContext, Audit],
) -> None:
    registry, ctx, audit = app
    result = await code(
        registry,
        ctx,
        "api.memory_write(path='todo.md', content='- buy milk')\n"
        "print(api.memory_read(path='todo.md'))\n"
        "now = api.datetime(timezone='UTC')\n"
        "'UTC' in now",
    )
    assert result.success, result.output
    assert result.output == "- buy milk\nResult: True"
    assert (ctx.home / "memory" / "todo.md").read_text() == "- buy milk"
    records = await audit.listing()
    by_tool = {r["tool"]: r for r in records}
    assert {r["tool"] for r in records} == {
        "execute_code",
        "memory_write",
        "memory_read",
        "datetime",
    }
    assert by_tool["execute_code"]["origin"] == "chat"
    assert {by_tool[t]["origin"] for t in ("memory_write", "memory_read", "datetime")} == {
        "chat>code"
    }
    assert all(r["status"] == "completed" and r["chat_id"] == "c1" for r in records)


async def test_approval_inside_code_approve_and_reject(
    app: tuple[ToolRegistry, RunContext, Audit], owner: Owner
) -> None:
    registry, ctx, audit = app
    owner.decisions += [Decision.APPROVED, Decision.REJECTED]
    snippet = (
        "for who in ['ann', 'bob']:\n"
        "    try:\n"
        "        print(api.send(to=who, text='hi'))\n"
        "    except ToolError as e:\n"
        "        print('not sent:', e)\n"
    )
    result = await code(registry, ctx, snippet)
    assert result.success, result.output
    assert result.output == "sent to ann\nnot sent: send: Tool call rejected by user."
    assert [r.origin for r in owner.asked] == ["chat>code", "chat>code"]
    sent = (ctx.home / "sent.jsonl").read_text().splitlines()
    assert [json.loads(s)["to"] for s in sent] == ["ann"]
    records = await audit.listing(tool="send")
    assert {(r["target"], r["approval_status"], r["origin"]) for r in records} == {
        ("send:to=ann", "approved", "chat>code"),
        ("send:to=bob", "rejected", "chat>code"),
    }


async def test_a_failure_reports_the_line_and_the_calls_that_already_ran(
    app: tuple[ToolRegistry, RunContext, Audit],
) -> None:
    registry, ctx, _ = app
    result = await code(
        registry,
        ctx,
        "api.memory_write(path='a.md', content='x' * 100)\napi.memory_read(path='missing.md')\n",
    )
    assert not result.success
    lines = result.output.splitlines()
    assert lines[0].startswith("Error: line 2: ToolError: memory_read: ")
    assert "Tool calls that already ran (do not repeat their side effects):" in lines
    preview = repr("x" * 100)[:39]  # long arguments are cut to 40 characters
    assert lines[-2] == f"  1. memory_write(path='a.md', content={preview}…) → ok"
    assert lines[-1].startswith("  2. memory_read(path='missing.md') → failed: ")


async def test_limits_as_the_model_sees_them(
    app: tuple[ToolRegistry, RunContext, Audit],
) -> None:
    registry, ctx, _ = app
    ctx.config.code_mode.timeout_seconds = 0.5
    slow = await code(registry, ctx, "api.datetime()\nwhile True:\n    pass")
    assert slow.output.startswith(
        "Error: TimeoutError: the code ran over code_mode.timeout_seconds (0.5 s of computation)"
    )
    assert slow.output.endswith("  1. datetime() → ok")
    syntax = await code(registry, ctx, "print('a')\nprint('b'\n")
    assert syntax.output.splitlines()[:2] == [
        "Error: line 3: SyntaxError: unexpected EOF while parsing",
        "No tool call ran.",
    ]
    # Printing is capped in the sandbox; the executor then pages the rest as for any tool.
    loud = await code(registry, ctx, "for i in range(100000):\n    print(i)")
    assert loud.success and len(loud.output) < 13_000
    assert "[Output cut: showing 12000 of" in loud.output and "read_output(id=" in loud.output


async def test_validation_errors_and_deny_rules_arrive_as_tool_errors(
    app: tuple[ToolRegistry, RunContext, Audit],
) -> None:
    registry, ctx, audit = app
    await audit.add_rule("deny", "send:to=eve", "owner")
    result = await code(
        registry,
        ctx,
        "out = []\n"
        "for call in [lambda: api.kinds(action='nope'), lambda: api.send(to='eve', text='x')]:\n"
        "    try:\n"
        "        call()\n"
        "    except ToolError as e:\n"
        "        out.append(str(e))\n"
        "out",
    )
    assert result.success
    assert "kinds: invalid arguments for kinds: action:" in result.output
    assert "send: Tool call rejected: the owner's rule 'send:to=eve' denies it." in result.output
    assert not (ctx.home / "sent.jsonl").exists()


async def test_keyword_parameters_and_outside_content(
    app: tuple[ToolRegistry, RunContext, Audit],
) -> None:
    registry, ctx, _ = app
    keyword = await code(registry, ctx, "api.mail(from_='a@b.c')")
    assert keyword.output == "Result: from=a@b.c"
    # Code can parse outside content; what reaches the model is labelled as such.
    result = await code(registry, ctx, "import json\njson.loads(api.page(url='x'))['title']")
    assert result.output == (
        '<untrusted_content source="execute_code: page">\nResult: Hello\n</untrusted_content>'
    )


async def test_artifacts_of_calls_inside_code_are_delivered(
    app: tuple[ToolRegistry, RunContext, Audit],
) -> None:
    registry, ctx, _ = app
    result = await code(registry, ctx, "api.snap(name='a')\napi.snap(name='b')\n1/0")
    assert not result.success
    assert [a.name for a in result.artifacts] == ["a.png", "b.png"]


async def test_a_snippet_cannot_run_code_mode_recursively(
    app: tuple[ToolRegistry, RunContext, Audit],
) -> None:
    registry, ctx, audit = app
    snippet = 'api.execute_code(code=\'api.send(to="x", text="y")\')'
    result = await code(registry, ctx, snippet)
    assert not result.success
    assert "AttributeError: module 'api' has no attribute 'execute_code'" in result.output
    assert [r["tool"] for r in await audit.listing()] == ["execute_code"]


# ---------------------------------------------------------------- escape attempts


class TestVulnerabilities:
    """Each attempt must fail inside the sandbox, run no tool, and leak nothing."""

    @pytest.fixture(autouse=True)
    def _setup(
        self,
        app: tuple[ToolRegistry, RunContext, Audit],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        self.registry, self.ctx, self.audit = app
        self.secret = "s3cr3t-value-in-the-host-environment"
        monkeypatch.setenv("AUGURE_TEST_SECRET", self.secret)
        self.marker = self.ctx.home / "pwned"

    async def attempt(self, snippet: str) -> str:
        result = await code(self.registry, self.ctx, snippet)
        assert not result.success, result.output
        assert self.secret not in result.output
        assert not self.marker.exists()
        assert {r["tool"] for r in await self.audit.listing()} == {"execute_code"}
        return result.output

    async def test_vulnerability_import_os(self) -> None:
        output = await self.attempt(f"import os\nos.system('touch {self.marker}')")
        assert "Error: line 2: AttributeError" in output

    async def test_vulnerability_import_subprocess(self) -> None:
        output = await self.attempt("import subprocess\nsubprocess.run(['id'])")
        assert "ModuleNotFoundError: No module named 'subprocess'" in output

    async def test_vulnerability_dunder_import(self) -> None:
        output = await self.attempt("__import__('subprocess').run(['id'])")
        assert "NameError" in output

    async def test_vulnerability_open_files(self) -> None:
        output = await self.attempt("print(open('/etc/passwd').read())")
        assert "PermissionError" in output and "root:" not in output
        output = await self.attempt(
            f"import pathlib\npathlib.Path('{self.marker}').write_text('x')"
        )
        assert "Error: line 2" in output

    async def test_vulnerability_mro_walks(self) -> None:
        for snippet in (
            "().__class__.__mro__[1].__subclasses__()",
            "type(1).__subclasses__()",
            "object.__subclasses__()",
            "(lambda: 0).__globals__",
            "api.memory_read.__globals__",
            "api.__dict__",
        ):
            assert "AttributeError" in await self.attempt(snippet), snippet

    async def test_vulnerability_eval_and_exec(self) -> None:
        assert "NameError" in await self.attempt("eval(\"__import__('os')\")")
        output = await self.attempt(f"exec(\"import os\\nos.system('touch {self.marker}')\")")
        assert "AttributeError" in output
        assert "NameError" in await self.attempt("compile('1', 'x', 'eval')")

    async def test_vulnerability_environment_variables(self) -> None:
        assert "not supported" in await self.attempt("import os\nos.getenv('AUGURE_TEST_SECRET')")
        assert "not supported" in await self.attempt("import os\nprint(os.environ)")
        assert os.environ["AUGURE_TEST_SECRET"] == self.secret  # it was there to be stolen

    async def test_vulnerability_unregistered_tool(self) -> None:
        output = await self.attempt("api.shell(command='id')")
        assert "AttributeError: module 'api' has no attribute 'shell'" in output
        assert "NameError" in await self.attempt("shell(command='id')")

    async def test_vulnerability_recursive_execute_code(self) -> None:
        output = await self.attempt("f = getattr(api, 'execute_code')\nf(code='1')")
        assert "has no attribute 'execute_code'" in output

    async def test_vulnerability_memory_bomb(self) -> None:
        started = time.monotonic()
        assert "MemoryError" in await self.attempt("x = 'x' * 10**10")
        assert "MemoryError" in await self.attempt("l = []\nwhile True:\n    l.append('x' * 10000)")
        assert "MemoryError" in await self.attempt("2 ** 10**10")
        assert time.monotonic() - started < 10

    async def test_vulnerability_deep_recursion(self) -> None:
        assert "RecursionError" in await self.attempt("def f(n):\n    return f(n + 1)\nf(0)")
