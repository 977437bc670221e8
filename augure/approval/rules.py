"""Rule patterns over canonical targets such as `email:send:to=a@b.c`.

Only `*` (any run of characters) and `?` (one character) are special; everything else is
literal, so a target containing `[` or `\\` can never widen a rule by accident.
"""

from __future__ import annotations

import re
from functools import lru_cache

from augure.store.audit import Rule


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    parts = []
    for char in pattern:
        if char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.DOTALL)


def matches(pattern: str, target: str) -> bool:
    return _compile(pattern).fullmatch(target) is not None


def escape(literal: str) -> str:
    """A literal piece of a target, unable to act as a wildcard in a derived rule."""
    return literal.replace("*", "?").replace("\n", "?")


def verdict(rules: list[Rule], target: str | None) -> Rule | None:
    """The rule deciding `target`: any matching deny wins over every allow."""
    if target is None:
        return None
    matching = [rule for rule in rules if matches(rule.pattern, target)]
    denies = [rule for rule in matching if rule.effect == "deny"]
    chosen = denies or matching
    return chosen[0] if chosen else None
