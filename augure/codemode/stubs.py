"""Python signatures of the `api.<tool>(...)` functions, generated from the tools' JSON schemas.

The model writes code against these, so they are what it reads: one typed `def` per tool with
the description and parameter notes as a docstring, required parameters first.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from augure.tools.arguments import compact_schema
from augure.tools.base import Tool

_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
}


def python_name(param: str) -> str:
    """The name a snippet uses for a parameter: `from` cannot be written, `from_` can."""
    name = param if param.isidentifier() else re.sub(r"\W", "_", param)
    return f"{name}_" if keyword.iskeyword(name) else name


def parameter_order(schema: dict[str, Any]) -> list[str]:
    """Schema parameter names, required first (Python needs defaults last), else as declared."""
    properties = list(schema.get("properties", {}))
    required = set(schema.get("required", []))
    return [p for p in properties if p in required] + [p for p in properties if p not in required]


def annotation(node: Any, defs: dict[str, Any] | None = None) -> str:
    """A Python type for one JSON-schema node (`Any` where JSON Schema says more than Python)."""
    defs = defs or {}
    if not isinstance(node, dict):
        return "Any"
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return annotation(defs.get(ref.removeprefix("#/$defs/")), defs)
    if "enum" in node:
        return f"Literal[{', '.join(repr(v) for v in node['enum'])}]"
    if "const" in node:
        return f"Literal[{node['const']!r}]"
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return _union(annotation(option, defs) for option in node[key])
    kind = node.get("type")
    if isinstance(kind, list):
        return _union(annotation({**node, "type": k}, defs) for k in kind)
    if kind == "array":
        return f"list[{annotation(node.get('items'), defs)}]"
    if kind == "object":
        values = node.get("additionalProperties")
        return f"dict[str, {annotation(values, defs) if isinstance(values, dict) else 'Any'}]"
    return _SCALARS.get(kind, "Any") if isinstance(kind, str) else "Any"


def stub(tool: Tool, description: str | None = None, *, brief: bool = False) -> str:
    """`def name(params) -> str:` with a docstring; `brief` keeps the first sentence only."""
    text = description if description is not None else tool.description
    return _stub(tool.name, tool.arguments_model, text, brief)


@functools.lru_cache(maxsize=1024)
def _stub(name: str, params: type[BaseModel], description: str, brief: bool) -> str:
    # Cached by the params model, which never changes: generating a tool's JSON schema costs
    # about a millisecond, and the stubs go into every code-mode request.
    schema = compact_schema(params.model_json_schema())
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    defs = schema.get("$defs", {})
    signature: list[str] = []
    notes: list[str] = []
    for param in parameter_order(schema):
        node = properties[param]
        shown = python_name(param)
        kind = annotation(node, defs)
        if param in required:
            signature.append(f"{shown}: {kind}")
        elif "default" in node:
            signature.append(f"{shown}: {kind} = {node['default']!r}")
        else:
            optional = kind if kind == "Any" or "None" in _members(kind) else f"{kind} | None"
            signature.append(f"{shown}: {optional} = None")
        if isinstance(node, dict) and node.get("description"):
            notes.append(f"{shown}: {_flat(node['description'])}")
    text = _flat(description)
    if brief:
        text, notes = _first_sentence(text), []
    doc = "\n    ".join([text, *notes]).replace('"""', "'''")
    return f'def {name}({", ".join(signature)}) -> str:\n    """{doc}"""'


def render(
    tools: Iterable[Tool],
    describe: Callable[[Tool], str] | None = None,
) -> str:
    """The stubs of `tools`, one after another; deferred tools get one sentence."""
    return "\n\n".join(stub(t, describe(t) if describe else None, brief=t.deferred) for t in tools)


def _union(parts: Iterable[str]) -> str:
    seen: list[str] = []
    for part in parts:
        for piece in _members(part):
            if piece not in seen:
                seen.append(piece)
    return " | ".join(seen)


def _members(kind: str) -> list[str]:
    """The top-level members of a union text (`list[int | str] | None` has two)."""
    members, depth, start = [], 0, 0
    for index, char in enumerate(kind):
        depth += char == "["
        depth -= char == "]"
        if depth == 0 and kind.startswith(" | ", index):
            members.append(kind[start:index])
            start = index + 3
    return [*members, kind[start:]]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text
