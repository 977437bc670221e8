"""What a tool is: a typed async function, its schema generated from the type hints."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

if TYPE_CHECKING:
    from augure.config import Config
    from augure.memory.store import MemoryStore
    from augure.store.db import Store


class Egress(StrEnum):
    NONE = "none"
    READ_ONLY = "read_only"
    WRITE = "write"


Risk = Literal["low", "high"]


@dataclass(frozen=True)
class Artifact:
    type: Literal["file", "image", "json"]
    name: str
    content: str | bytes


@dataclass
class ToolResult:
    success: bool
    output: str
    artifacts: list[Artifact] = field(default_factory=list)

    @classmethod
    def ok(cls, output: str, artifacts: list[Artifact] | None = None) -> ToolResult:
        return cls(True, output, artifacts or [])

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(False, f"Error: {message}")


@dataclass
class RunContext:
    """What a tool may use. Built once per app; `chat_id` and `origin` per call."""

    config: Config
    memory: MemoryStore
    store: Store
    chat_id: str | None = None
    origin: str = "chat"
    scheduler: Any = None

    @property
    def home(self) -> Path:
        return self.config.home


ToolFunction = Callable[..., Awaitable["ToolResult | str"]]
ConfigCheck = Callable[["Config"], "str | None"]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass
class Tool:
    name: str
    description: str
    params: type[BaseModel]
    function: ToolFunction
    risk: Risk = "low"
    egress: Egress = Egress.NONE
    check: ConfigCheck | None = None
    hint: str | None = None

    @property
    def parameters(self) -> dict[str, Any]:
        return compact_schema(self.params.model_json_schema())

    def config_check(self, config: Config) -> str | None:
        """None when usable; otherwise what the owner must set."""
        return self.check(config) if self.check else None

    async def execute(self, args: dict[str, Any], ctx: RunContext) -> ToolResult:
        try:
            validated = self.params.model_validate(args)
        except ValidationError as exc:
            return ToolResult.error(f"invalid arguments for {self.name}: {describe(exc)}")
        try:
            result = await self.function(ctx, **dict(validated))
        except Exception as exc:  # a tool failure is an observation for the model
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")
        return result if isinstance(result, ToolResult) else ToolResult.ok(str(result))


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
) -> Callable[[ToolFunction], Tool]:
    """Declare a tool from `async def f(ctx: RunContext, a: int, b: str = "x") -> ...`.

    The docstring is the description; `Annotated[T, Field(description=...)]` documents a
    parameter. Everything after `ctx` becomes the JSON schema the model sees.
    """

    def wrap(function: ToolFunction) -> Tool:
        hints = typing.get_type_hints(function, include_extras=True)
        fields: dict[str, Any] = {}
        for index, (param_name, param) in enumerate(inspect.signature(function).parameters.items()):
            if index == 0:
                continue  # the RunContext
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param_name] = (hints[param_name], default)
        model = create_model(f"{function.__name__}_params", __base__=_Params, **fields)
        return Tool(
            name=name or function.__name__,
            description=inspect.cleandoc(function.__doc__ or "").replace("\n", " "),
            params=model,
            function=function,
            risk=risk,
            egress=egress,
            check=check,
            hint=hint,
        )

    return wrap


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Pydantic's schema minus what costs tokens and tells the model nothing."""

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: clean(v) for k, v in node.items() if k != "title"}
            options = node.get("anyOf")
            if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
                (kept,) = [o for o in options if o != {"type": "null"}]
                node.pop("anyOf")
                node = {**kept, **node}
                if node.get("default", 0) is None:
                    node.pop("default")
            return node
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    cleaned: dict[str, Any] = clean(schema)
    cleaned.setdefault("properties", {})
    return cleaned
