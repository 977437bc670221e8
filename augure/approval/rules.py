"""Rule patterns over canonical targets such as `email:send:to=a@b.c`.

In a pattern only `*` (any run of characters) and `?` (one character) are wildcards, and
`\\` makes the next `*`, `?` or `\\` literal; everything else is literal. A target is always
literal: a rule derived from one (`literal(target)`) matches that target and nothing else,
whatever `*`, `?` or `[` it contains (docs/reference/approvals.md#rules).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from augure.store.audit import Rule

SPECIAL = ("\\", "*", "?")


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    parts = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            if following in SPECIAL and following:
                parts.append(re.escape(following))
            else:  # a lone backslash is itself
                parts.append(re.escape(char + following))
        elif char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.DOTALL)


def matches(pattern: str, target: str) -> bool:
    return _compile(pattern).fullmatch(target) is not None


def literal(text: str) -> str:
    """A pattern matching exactly `text`: its wildcards and backslashes escaped."""
    return re.sub(r"([\\*?])", r"\\\1", text)


def verdict(rules: list[Rule], target: str | None, aliases: Iterable[str] = ()) -> Rule | None:
    """The rule deciding `target`: a deny matching the target or any other spelling of it
    (`aliases`) wins over every allow; an allow must match the target itself."""
    if target is None:
        return None
    spellings = [target, *aliases]
    denies = [
        r for r in rules if r.effect == "deny" and any(matches(r.pattern, s) for s in spellings)
    ]
    if denies:
        return denies[0]
    allows = [r for r in rules if r.effect != "deny" and matches(r.pattern, target)]
    return allows[0] if allows else None
