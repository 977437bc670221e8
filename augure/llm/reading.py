"""Reading the endpoint's JSON the way the SDK's lenient models read it: a field left out,
or sent as null, is that kind's empty value."""

from __future__ import annotations

from typing import Any, TypeVar

Wanted = TypeVar("Wanted", list[Any], dict[str, Any], str, int)


def field(value: object, key: str, kind: type[Wanted]) -> Wanted:
    """`value[key]` if it is of `kind`, else that kind's empty value: an endpoint that leaves
    out a field, or sends null, is read the way the SDK's lenient models read it."""
    found = value.get(key) if isinstance(value, dict) else None
    if isinstance(found, kind) and not (kind is int and isinstance(found, bool)):
        return found
    return kind()


def cached_tokens(usage: object) -> int:
    """`usage.prompt_tokens_details.cached_tokens`, where the endpoint reports it."""
    return field(field(usage, "prompt_tokens_details", dict), "cached_tokens", int)


def text(value: object, key: str) -> str:
    return field(value, key, str)
