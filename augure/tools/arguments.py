"""A tool's arguments: their model, made from the tool function's type hints; the compact JSON
schema the model is sent; what a validation error says; and every text among them."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, create_model


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


def arguments_model(function: Callable[..., Any]) -> type[BaseModel]:
    """The model of a tool function's parameters after `ctx`, from its type hints."""
    hints = typing.get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    parameters = inspect.signature(function).parameters.items()
    for index, (param_name, param) in enumerate(parameters):
        if index == 0:
            continue  # the RunContext
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param_name] = (hints[param_name], default)
    return create_model(f"{function.__name__}_params", __base__=_Params, **fields)


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


def describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        message = "unexpected parameter" if error["type"] == "extra_forbidden" else error["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def strings_in(arguments: BaseModel) -> list[str]:
    """Every text among a call's arguments, however deep."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(arguments.model_dump())
    return found


def one_line(value: str | None) -> str | None:
    """A text argument that becomes a header or a field of a stored record: a line break or
    NUL in it could start another (header injection), so it is refused."""
    if value is not None and re.search(r"[\r\n\x00]", value):
        raise ValueError("must be one line: CR, LF and NUL are refused (header injection)")
    return value


OneLine = Annotated[str | None, AfterValidator(one_line)]
