"""What a tool is: a typed async function, its schema generated from the type hints."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from augure.approval.rules import literal
from augure.caller import Caller
from augure.tools.result import Artifact, ErrorKind, ToolError, ToolResult

__all__ = ["Artifact", "ErrorKind", "ToolError", "ToolResult"]

if TYPE_CHECKING:
    from augure.config import Config
    from augure.llm import LLMResponse
    from augure.memory.store import MemoryStore
    from augure.store.db import Store
    from augure.tools.registry import ToolRegistry


class Egress(StrEnum):
    NONE = "none"
    READ_ONLY = "read_only"
    WRITE = "write"


Risk = Literal["low", "high"]
# docs/reference/execution.md#progress. `direct`: awaited in the turn. `stateful`: reports progress
# lines as it works
# (`RunContext.progress`; a direct tool gets no progress sink, so its lines go nowhere).
# Whether a call may be released from the turn is `Tool.background`.
Mode = Literal["direct", "stateful"]


@dataclass(frozen=True)
class RunContext:
    """What a tool may use: the app's services, built once, and the `Caller` of this call —
    who asked, in which chat, with which tools allowed (an immutable value, extended by
    whoever calls for another, never replaced)."""

    config: Config
    memory: MemoryStore
    store: Store
    caller: Caller = field(default_factory=Caller)
    registry: ToolRegistry | None = None
    scheduler: Any = None
    # What the owner saw and approved (the preview, e.g. an install's files): the tool runs
    # exactly that, never a fresh fetch of it.
    approved: dict[str, Any] | None = None
    # The executor's door, for tools that call other tools (code mode, skills): every such
    # call goes through the same pipeline. Given at construction; tools never import it.
    execute: Execute | None = None
    # Where a stateful tool's progress lines go (set by the executor for each call).
    report: Callable[[str], None] | None = None
    # Counts a model call made inside a tool (a subagent's) in the running turn's usage (set
    # by the turn loop).
    spend: Callable[[LLMResponse], None] | None = None

    @property
    def chat_id(self) -> str | None:
        return self.caller.chat_id

    @property
    def origin(self) -> str:
        return self.caller.origin

    @property
    def turn_id(self) -> str | None:
        return self.caller.turn_id

    @property
    def allowed_tools(self) -> frozenset[str] | None:
        return self.caller.allowed_tools

    @property
    def invocation(self) -> str | None:
        """The audit record of the call this context runs: calls made from inside it (a
        batch's, a snippet's) name it as their parent."""
        return self.caller.parent

    def for_caller(self, caller: Caller) -> RunContext:
        """These services, working for `caller`."""
        return replace(self, caller=caller)

    def via(self, link: str, *, tools: Collection[str] | None = None) -> RunContext:
        """The context of calls made on this caller's behalf by `link` (code, batch, a
        subagent...): the chain extended, the allowed tools narrowed to `tools` if given."""
        return replace(self, caller=self.caller.via(link, tools=tools))

    def progress(self, line: str) -> None:
        """A stateful tool's latest progress line (shown to the owner on long calls)."""
        if self.report is not None:
            self.report(line)

    async def call(self, name: str, arguments: str | dict[str, Any]) -> ToolResult:
        """Run another tool through the executor, in this context."""
        if self.execute is None:
            raise RuntimeError("this RunContext has no executor")
        return await self.execute(name, arguments, self)

    @property
    def home(self) -> Path:
        return self.config.home


ToolFunction = Callable[..., Awaitable["ToolResult | str"]]
# The other form a stateful tool may take: an async generator yielding progress lines, then
# its result. `tool` turns it into a ToolFunction, so every caller awaits one kind.
StepsFunction = Callable[..., AsyncIterator["str | ToolResult"]]
Execute = Callable[[str, "str | dict[str, Any]", "RunContext"], Awaitable[ToolResult]]
ConfigCheck = Callable[["Config"], "str | None"]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass
class Tool:
    name: str
    description: str
    # The arguments' model, or a function that builds it on first use (`tool` gives one:
    # building every tool's model at import slowed each start: docs/performance.md).
    model: type[BaseModel] | Callable[[], type[BaseModel]]
    function: ToolFunction
    risk: Risk = "low"
    egress: Egress = Egress.NONE
    check: ConfigCheck | None = None
    hint: str | None = None
    # Per-call egress for multi-action tools (e.g. email `send` writes, `list` reads).
    classify: Callable[[Any], Egress] | None = None
    # The canonical target a rule matches, from validated arguments (`email:send:to=a@b.c`).
    target: Callable[[Any], str | None] | None = None
    # The narrow rule "Always allow" would save; default: exactly this target.
    rule: Callable[[Any], str | None] | None = None
    # Other spellings of the same target (e.g. a preset path as an absolute URL): a deny
    # rule matching any of them refuses the call.
    aliases: Callable[[Any, Config], list[str]] | None = None
    # The target once the preview is known, when it names more than the arguments do
    # (an install's version): rules are matched against it and derived from it.
    refine: Callable[[Any, dict[str, Any]], str] | None = None
    # May run at the same time as other calls of one model response.
    safe: bool | None = None
    # Output comes from outside (web, mail, ...): the model sees it labelled as data.
    untrusted: bool = False
    # Output may pass on another tool's outside content (a saved output, a snippet's or a
    # skill's result): whatever is derived from it stays marked (e.g. a history summary).
    relays: bool = False
    # What a read-only call sends out to a place, from validated arguments: a URL, typed
    # text; "" for a step on a page it is on (a click). After outside content these are
    # checked for data the model composed (augure/tools/leaks.py).
    leaves: Callable[[Any], list[str]] | None = None
    # Listed by name only; its schema is sent once the model asks for it with load_tools.
    deferred: bool = False
    timeout: float = 60.0
    mode: Mode = "direct"
    # Takes the optional `background` flag: such a call may be released from the turn and
    # its result come back later as a turn of its own (docs/reference/execution.md).
    background: bool = False
    # Before asking the owner: gather what the approval request should show (e.g. a skill's
    # summary and scan verdict). Returning a string refuses the call with that error, unasked.
    preview: Callable[[Any, RunContext], Awaitable[dict[str, Any] | str]] | None = None

    def __post_init__(self) -> None:
        # A tool written as an async generator (however it was built) runs as a coroutine,
        # so every caller of `function` awaits one kind.
        steps: Any = self.function
        if inspect.isasyncgenfunction(steps):
            self.function = _driven(self.name, steps)

    @functools.cached_property
    def params(self) -> type[BaseModel]:
        return _built(self.model)

    def validated_by(self, name: str, validator: Any) -> None:
        """Add a model validator (`model_validator(...)(f)`) to the arguments' model, when
        that model is built."""
        source = self.model

        def checked() -> type[BaseModel]:
            base = _built(source)
            validators = {name: validator}
            name_checked = f"{base.__name__}_checked"
            return create_model(name_checked, __base__=base, __validators__=validators)

        self.model = checked
        self.__dict__.pop("params", None)  # built before this: build it again, checked

    @property
    def parameters(self) -> dict[str, Any]:
        schema = compact_schema(self.params.model_json_schema())
        if self.background:
            # Not part of the tool's own arguments: the executor takes it off before they
            # are validated (docs/reference/execution.md). No description, to keep every prompt
            # small.
            schema["properties"] = {**schema["properties"], "background": {"type": "boolean"}}
        return schema

    def config_check(self, config: Config) -> str | None:
        """None when usable; otherwise what the owner must set."""
        return self.check(config) if self.check else None

    def validate(self, args: dict[str, Any]) -> BaseModel | str:
        """The validated arguments, or an error text for the model."""
        try:
            return self.params.model_validate(args)
        except ValidationError as exc:
            return f"invalid arguments for {self.name}: {describe(exc)}"

    def egress_for(self, params: BaseModel) -> Egress:
        return self.classify(params) if self.classify else self.egress

    def needs_approval(self, params: BaseModel) -> bool:
        return self.risk == "high" or self.egress_for(params) is Egress.WRITE

    def concurrency_safe(self, params: BaseModel) -> bool:
        return self.safe if self.safe is not None else self.egress_for(params) is not Egress.WRITE

    def target_for(self, params: BaseModel) -> str | None:
        return self.target(params) if self.target else None

    def leaving(self, params: BaseModel) -> list[str]:
        return self.leaves(params) if self.leaves else []

    def aliases_for(self, params: BaseModel, config: Config) -> list[str]:
        return self.aliases(params, config) if self.aliases else []

    def rule_for(self, params: BaseModel, target: str | None = None) -> str | None:
        """The pattern "Always allow" saves: the tool's own narrow rule, or exactly the target
        (its `*` and `?` escaped, so they stay literal characters)."""
        if self.rule:
            return self.rule(params)
        target = target if target is not None else self.target_for(params)
        return literal(target) if target else None

    async def invoke(self, params: BaseModel, ctx: RunContext) -> ToolResult:
        try:
            result = await self.function(ctx, **dict(params))
        except ToolError as exc:
            return ToolResult.error(str(exc), exc.kind)
        except Exception as exc:  # a tool failure is an observation for the model
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")
        return result if isinstance(result, ToolResult) else ToolResult.ok(str(result))

    async def execute(self, args: dict[str, Any], ctx: RunContext) -> ToolResult:
        """Validate and run, with no policy: for tests of the tool itself."""
        params = self.validate(args)
        if isinstance(params, str):
            return ToolResult.error(params, ErrorKind.INVALID_CALL)
        return await self.invoke(params, ctx)


def _driven(name: str, steps: StepsFunction) -> ToolFunction:
    @functools.wraps(steps)
    async def run(ctx: RunContext, **arguments: Any) -> ToolResult:
        result = await _last_of(steps(ctx, **arguments), ctx)
        return result or ToolResult.error(f"{name} ended without a result")

    return run


async def _last_of(steps: AsyncIterator[str | ToolResult], ctx: RunContext) -> ToolResult | None:
    """Run a generator tool: each `str` it yields is a progress line, its `ToolResult` the
    result (and the end: nothing after it runs)."""
    try:
        async for step in steps:
            if isinstance(step, ToolResult):
                return step
            ctx.progress(step)
    finally:
        aclose = getattr(steps, "aclose", None)
        if aclose is not None:
            await aclose()
    return None


def _built(model: type[BaseModel] | Callable[[], type[BaseModel]]) -> type[BaseModel]:
    return model if isinstance(model, type) else model()


def describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        message = "unexpected parameter" if error["type"] == "extra_forbidden" else error["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def tool(
    name: str | None = None,
    *,
    risk: Risk = "low",
    egress: Egress = Egress.NONE,
    check: ConfigCheck | None = None,
    hint: str | None = None,
    **options: Any,
) -> Callable[[ToolFunction | StepsFunction], Tool]:
    """Declare a tool from `async def f(ctx: RunContext, a: int, b: str = "x") -> ...`.

    The docstring is the description; `Annotated[T, Field(description=...)]` documents a
    parameter. Everything after `ctx` becomes the JSON schema the model sees. `options` are
    the other fields of Tool (classify, target, rule, safe, untrusted, deferred, timeout).
    An async generator function is a stateful tool: each `str` it yields is a progress
    line, and the `ToolResult` it yields last is its result.
    """

    def wrap(function: ToolFunction | StepsFunction) -> Tool:
        def build_params() -> type[BaseModel]:
            hints = typing.get_type_hints(function, include_extras=True)
            fields: dict[str, Any] = {}
            parameters = inspect.signature(function).parameters.items()
            for index, (param_name, param) in enumerate(parameters):
                if index == 0:
                    continue  # the RunContext
                default = ... if param.default is inspect.Parameter.empty else param.default
                fields[param_name] = (hints[param_name], default)
            return create_model(f"{function.__name__}_params", __base__=_Params, **fields)

        if inspect.isasyncgenfunction(function):
            options.setdefault("mode", "stateful")  # Tool makes it a coroutine
        return Tool(
            name=name or function.__name__,
            description=inspect.cleandoc(function.__doc__ or "").replace("\n", " "),
            model=build_params,
            function=typing.cast(ToolFunction, function),
            risk=risk,
            egress=egress,
            check=check,
            hint=hint,
            **options,
        )

    return wrap


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Pydantic's schema minus what costs tokens and tells the model nothing."""

    def clean(node: Any, names: bool = False) -> Any:
        if isinstance(node, dict):
            # Keys under "properties" are parameter names (a tool may take `title`), not the
            # "title" labels pydantic adds everywhere else.
            node = {
                k: clean(v, k == "properties") for k, v in node.items() if names or k != "title"
            }
            if not names:
                # JSON Schema's defaults spelled out ("any extra key", "items of any type").
                if node.get("additionalProperties") is True:
                    node.pop("additionalProperties")
                if node.get("items") == {}:
                    node.pop("items")
            options = node.get("anyOf")
            if isinstance(options, list) and {"type": "null"} in options and not names:
                # Optional parameters: "null" tells the model nothing that omitting them doesn't.
                kept = [o for o in options if o != {"type": "null"}]
                node.pop("anyOf")
                node = {**kept[0], **node} if len(kept) == 1 else {"anyOf": kept, **node}
                if node.get("default", 0) is None:
                    node.pop("default")
            return node
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    cleaned: dict[str, Any] = clean(schema)
    # Sent with every request for every tool, and no provider renders it for the model:
    # an unexpected parameter is refused by validation all the same.
    if cleaned.get("additionalProperties") is False:
        cleaned.pop("additionalProperties")
    cleaned.setdefault("properties", {})
    return cleaned
