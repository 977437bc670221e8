"""What a tool is: a typed async function, its schema generated from the type hints."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ValidationError, create_model

from augure.approval.rules import literal
from augure.common.caller import Caller, Offer
from augure.tools.arguments import arguments_model, compact_schema, describe
from augure.tools.result import Artifact, ErrorKind, ToolError, ToolResult

# What a tool module needs, from one import: its results, and the line an invalid settings
# section is refused with.
__all__ = ["Artifact", "ErrorKind", "ToolError", "ToolResult", "describe"]

if TYPE_CHECKING:
    from augure.config.settings import Config
    from augure.llm.client import LLMResponse
    from augure.memory.store import MemoryStore
    from augure.store.state import Store


class Egress(StrEnum):
    NONE = "none"
    READ_ONLY = "read_only"
    WRITE = "write"


Risk = Literal["low", "high"]
# `direct`: awaited in the turn. `stateful`: reports progress lines as it works
# (`RunContext.progress`; a direct tool gets no progress sink, so its lines go nowhere).
# Whether a call may be released from the turn is `Tool.background`.
Mode = Literal["direct", "stateful"]


class Catalogue(Protocol):
    """What a tool that reaches other tools (code mode, subagents, load_tools) reads of the
    registry. A protocol here, so that this module never imports the registry built on it."""

    def get(self, name: str) -> Tool | None: ...

    def list(self) -> list[Tool]: ...

    def description(self, tool: Tool) -> str: ...

    def schema(self, tool: Tool) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RunContext:
    """What a tool may use: the app's services, built once, and the `Caller` of this call —
    who asked, in which chat, with which tools allowed (an immutable value, extended by
    whoever calls for another, never replaced)."""

    config: Config
    memory: MemoryStore
    store: Store
    caller: Caller = field(default_factory=Caller)
    registry: Catalogue | None = None
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
    # Texts to vectors through the endpoint's /embeddings; set only with `[recall]
    # embeddings_model` (docs/recall.md#vectors).
    embed: Callable[[list[str]], Awaitable[list[Any]]] | None = None

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

    async def call(self, name: str, sent: str | dict[str, Any]) -> ToolResult:
        """Run another tool through the executor, in this context: `sent` is what a model
        (or a snippet, a skill) wrote, validated by the pipeline like any call."""
        if self.execute is None:
            raise RuntimeError("this RunContext has no executor")
        return await self.execute(name, sent, self)

    @property
    def home(self) -> Path:
        return self.config.home


ToolFunction = Callable[..., Awaitable["ToolResult | str"]]
# The other form a stateful tool may take: an async generator yielding progress lines, then
# its result. `tool` turns it into a ToolFunction, so every caller awaits one kind.
StepsFunction = Callable[..., AsyncIterator["str | ToolResult"]]
Execute = Callable[[str, "str | dict[str, Any]", "RunContext"], Awaitable[ToolResult]]
ConfigCheck = Callable[["Config"], "str | None"]


Classify = Callable[[Any, "Config"], Egress]
Target = Callable[[Any], "str | None"]
Preview = Callable[[Any, "RunContext"], Awaitable["dict[str, Any] | str"]]
Stays = Callable[[Any, "RunContext"], list[str]]


@dataclass(frozen=True)
class Approval:
    """Everything that decides whether a call asks the owner, and what a rule matches: one
    value per tool. Each callable takes the call's validated arguments."""

    risk: Risk = "low"
    egress: Egress = Egress.NONE
    # Per-call egress for multi-action tools (email `send` writes, `list` reads); it gets the
    # config for tools whose answer depends on the owner's files (a memory write landing on
    # the heartbeat checklist).
    classify: Classify | None = None
    # The canonical target a rule matches (`email:send:to=a@b.c`).
    target: Target | None = None
    # The narrow rule "Always allow" would save; default: exactly this target.
    rule: Target | None = None
    # Other spellings of the same target (e.g. a preset path as an absolute URL): a deny
    # rule matching any of them refuses the call.
    aliases: Callable[[Any, Config], list[str]] | None = None
    # The target once the preview is known, when it names more than the arguments do
    # (an install's version): rules are matched against it and derived from it.
    refine: Callable[[Any, dict[str, Any]], str] | None = None
    # What a read-only call sends out to a place: a URL, typed text; "" for a step on a page
    # it is on (a click). After outside content these are checked for data the model
    # composed (augure/tools/leaks.py).
    leaves: Callable[[Any], list[str]] | None = None
    # Before asking the owner: gather what the approval request should show (e.g. a skill's
    # summary and scan verdict). Returning a string refuses the call with that error, unasked.
    preview: Preview | None = None
    # What the call leaves for later units to read as standing text (a memory file's new
    # lines, a skill's description): after outside content it asks (augure/tools/stays.py).
    stays: Stays | None = None

    def egress_for(self, arguments: BaseModel, config: Config) -> Egress:
        return self.classify(arguments, config) if self.classify else self.egress

    def needed(self, arguments: BaseModel, config: Config) -> bool:
        """Whether the call asks the owner by its own nature (the owner's rules, profiles
        and the leak check are the executor's to add)."""
        return self.risk == "high" or self.egress_for(arguments, config) is Egress.WRITE

    def target_for(self, arguments: BaseModel) -> str | None:
        return self.target(arguments) if self.target else None

    def aliases_for(self, arguments: BaseModel, config: Config) -> list[str]:
        return self.aliases(arguments, config) if self.aliases else []

    def leaving(self, arguments: BaseModel) -> list[str]:
        return self.leaves(arguments) if self.leaves else []

    def staying(self, arguments: BaseModel, ctx: RunContext) -> list[str]:
        return self.stays(arguments, ctx) if self.stays else []

    def rule_for(self, arguments: BaseModel, target: str | None = None) -> str | None:
        """The pattern "Always allow" saves: the tool's own narrow rule, or exactly the target
        (its `*` and `?` escaped, so they stay literal characters)."""
        if self.rule:
            return self.rule(arguments)
        target = target if target is not None else self.target_for(arguments)
        return literal(target) if target else None


@dataclass(frozen=True)
class Running:
    """How the executor runs a tool's calls once they are allowed."""

    timeout: float = 60.0
    mode: Mode = "direct"
    # May run at the same time as other calls of one model response; None: unless it writes.
    safe: bool | None = None
    # Takes the optional `background` flag: such a call may be released from the turn and
    # its result come back later as a turn of its own (docs/background.md).
    background: bool = False


@dataclass
class Tool:
    name: str
    description: str
    # The arguments' model, or a function that builds it on first use (`tool` gives one:
    # building every tool's model at import would slow every start).
    model: type[BaseModel] | Callable[[], type[BaseModel]]
    function: ToolFunction
    approval: Approval = Approval()
    running: Running = Running()
    check: ConfigCheck | None = None
    hint: str | None = None
    # Listed by name only; its schema is sent once the model asks for it with load_tools.
    deferred: bool = False
    # Output comes from outside (web, mail, ...): the model sees it labelled as data.
    untrusted: bool = False
    # What its outside results are, as provenance: "page" (a web page, a document, an MCP
    # result), "listing" (search results) or "message" (a mail, an invitation): a link only
    # a message offered is not followed unasked (docs/security.md).
    offers: Offer = "page"
    # Output may pass on another tool's outside content (a saved output, a snippet's or a
    # skill's result): whatever is derived from it stays marked (e.g. a history summary).
    relays: bool = False

    def __post_init__(self) -> None:
        # A tool written as an async generator (however it was built) runs as a coroutine,
        # so every caller of `function` awaits one kind.
        steps: Any = self.function
        if inspect.isasyncgenfunction(steps):
            self.function = _driven(self.name, steps)

    @functools.cached_property
    def arguments_model(self) -> type[BaseModel]:
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
        self.__dict__.pop("arguments_model", None)  # built before this: build it again, checked

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as the model is sent it."""
        schema = compact_schema(self.arguments_model.model_json_schema())
        if self.running.background:
            # Not part of the tool's own arguments: the executor takes it off before they
            # are validated (docs/background.md). No description, to keep every prompt small.
            schema["properties"] = {**schema["properties"], "background": {"type": "boolean"}}
        return schema

    def config_check(self, config: Config) -> str | None:
        """None when usable; otherwise what the owner must set."""
        return self.check(config) if self.check else None

    def validate(self, raw: dict[str, Any]) -> BaseModel | str:
        """The validated arguments, or an error text for the model."""
        try:
            return self.arguments_model.model_validate(raw)
        except ValidationError as exc:
            return f"invalid arguments for {self.name}: {describe(exc)}"

    def concurrency_safe(self, arguments: BaseModel, config: Config) -> bool:
        if self.running.safe is not None:
            return self.running.safe
        return self.approval.egress_for(arguments, config) is not Egress.WRITE

    async def invoke(self, arguments: BaseModel, ctx: RunContext) -> ToolResult:
        try:
            result = await self.function(ctx, **dict(arguments))
        except ToolError as exc:
            return ToolResult.error(str(exc), exc.kind)
        except Exception as exc:  # a tool failure is an observation for the model
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")
        return result if isinstance(result, ToolResult) else ToolResult.ok(str(result))

    async def run_ungated(self, raw: dict[str, Any], ctx: RunContext) -> ToolResult:
        """Validate and run with no gate at all (no scope, limits, approval, redaction or
        record): for tests and benchmarks of the tool itself, never for a model's call."""
        arguments = self.validate(raw)
        if isinstance(arguments, str):
            return ToolResult.error(arguments, ErrorKind.INVALID_CALL)
        return await self.invoke(arguments, ctx)


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


def tool(
    name: str | None = None,
    *,
    risk: Risk = "low",
    egress: Egress = Egress.NONE,
    classify: Classify | None = None,
    target: Target | None = None,
    rule: Target | None = None,
    aliases: Callable[[Any, Config], list[str]] | None = None,
    refine: Callable[[Any, dict[str, Any]], str] | None = None,
    leaves: Callable[[Any], list[str]] | None = None,
    preview: Preview | None = None,
    stays: Stays | None = None,
    timeout: float = Running.timeout,
    mode: Mode | None = None,
    safe: bool | None = None,
    background: bool = False,
    check: ConfigCheck | None = None,
    hint: str | None = None,
    deferred: bool = False,
    untrusted: bool = False,
    offers: Offer = "page",
    relays: bool = False,
) -> Callable[[ToolFunction | StepsFunction], Tool]:
    """Declare a tool from `async def f(ctx: RunContext, a: int, b: str = "x") -> ...`.

    The docstring is the description; `Annotated[T, Field(description=...)]` documents a
    parameter. Everything after `ctx` becomes the JSON schema the model sees. The keywords
    are the fields of `Approval` (risk … stays), of `Running` (timeout … background) and
    of `Tool` (check … relays). An async generator function is a stateful tool (`mode`
    unless given): each `str` it yields is a progress line, and the `ToolResult` it yields
    last is its result.
    """
    approval = Approval(
        risk, egress, classify, target, rule, aliases, refine, leaves, preview, stays
    )

    def wrap(function: ToolFunction | StepsFunction) -> Tool:
        # A generator reports progress lines as it works (Tool makes it a coroutine).
        steps = inspect.isasyncgenfunction(function)
        running = Running(timeout, mode or ("stateful" if steps else "direct"), safe, background)
        return Tool(
            name=name or function.__name__,
            description=inspect.cleandoc(function.__doc__ or "").replace("\n", " "),
            model=functools.partial(arguments_model, function),
            function=typing.cast(ToolFunction, function),
            approval=approval,
            running=running,
            check=check,
            hint=hint,
            deferred=deferred,
            untrusted=untrusted,
            offers=offers,
            relays=relays,
        )

    return wrap
