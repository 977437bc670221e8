"""The `AUGURE__SECTION__KEY` variables, laid over the file's settings.

A variable names a key by its path, `__` between the parts, in any case:
`AUGURE__TOOLS__HTTP__TIMEOUT_SECONDS=10`. A key that holds a list, a table or a section
takes JSON (`AUGURE__GUESTS__TOOLS='["recall"]'`, or a whole section as
`AUGURE__LLM='{"model": "m"}'`, whose own keys' variables then win over it); any other key
takes its text, which the key's type reads (`"10"`, `"true"`). A key marked `Verbatim`
(`allowed_users`: `11, 22`) takes its text as it is.

This is the whole of what the settings library pydantic-settings did for Augure; reading it
here costs nothing at start, where that library cost ~1.4 MB and ~11 ms of imports
(docs/performance.md). Which variables name a key is checked before (`Keys.walk`).
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from augure.common.errors import UsageError

PREFIX = "AUGURE__"
DELIMITER = "__"
_CONTAINERS = (list, tuple, set, frozenset, dict)


class Verbatim:
    """Marks a key whose variable is read as plain text, never as JSON."""


class NotJson(UsageError):
    """A variable for a list, a table or a section whose value is not JSON (the value is not
    repeated: it may be a secret)."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name} is not valid JSON ({reason})")
        self.name = name


def overlay(
    data: dict[str, Any], root: type[BaseModel], environ: Mapping[str, str]
) -> dict[str, Any]:
    """`data` with the `AUGURE__` variables of `environ` laid over it: a variable wins, a
    variable for a key wins over one for its whole section."""
    found = [
        (name, name[len(PREFIX) :].lower().split(DELIMITER), value)
        for name, value in environ.items()
        if name.upper().startswith(PREFIX)
    ]
    merged = data
    for name, parts, value in sorted(found, key=lambda item: len(item[1])):
        merged = _merge(merged, _nested(parts, _read(name, value, _target(root, parts))))
    return merged


def _read(name: str, value: str, target: tuple[Any, tuple[Any, ...]] | None) -> Any:
    if target is None or not value:
        return value  # below a plain value or a tool's own section: its model reads the text
    annotation, metadata = target
    if Verbatim in metadata:
        return value
    needs, may = _json_kind(annotation)
    if not needs:
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        if may:  # a key that also takes plain text (`str | list[str]`): left to its type
            return value
        raise NotJson(name, getattr(exc, "msg", "a list or table is written as JSON")) from None


def _json_kind(annotation: Any) -> tuple[bool, bool]:
    """Whether a value for `annotation` is JSON, and whether plain text may stand instead."""
    annotation = _bare(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(annotation) if m is not type(None)]
        kinds = [_json_kind(member)[0] for member in members]
        return any(kinds), len(members) > 1 and not all(kinds)
    origin = typing.get_origin(annotation) or annotation
    is_model = isinstance(origin, type) and issubclass(origin, BaseModel)
    return (origin in _CONTAINERS or is_model), False


def _target(root: type[BaseModel], parts: list[str]) -> tuple[Any, tuple[Any, ...]] | None:
    """The type of the key `parts` names and its metadata; None when no declared type holds it
    (a tool's own section, a name below a plain value)."""
    annotation: Any = root
    metadata: tuple[Any, ...] = ()
    for part in parts:
        step = _child(annotation, part)
        if step is None:
            return None
        annotation, metadata = step
    return annotation, metadata


def _child(annotation: Any, part: str) -> tuple[Any, tuple[Any, ...]] | None:
    annotation = _bare(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for member in typing.get_args(annotation):
            step = _child(member, part)
            if step is not None:
                return step
        return None
    if typing.get_origin(annotation) is dict:  # a name the owner chose: `[profiles.NAME]`
        arguments = typing.get_args(annotation)
        return (arguments[1] if arguments else Any), ()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(part)
        if field is None:
            return None
        return field.annotation, tuple(field.metadata)
    return None


def _bare(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _nested(parts: list[str], value: Any) -> dict[str, Any]:
    for part in reversed(parts[1:]):
        value = {part: value}
    return {parts[0]: value}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        earlier = merged.get(key)
        if isinstance(earlier, dict) and isinstance(value, dict):
            merged[key] = _merge(earlier, value)
        else:
            merged[key] = value
    return merged
