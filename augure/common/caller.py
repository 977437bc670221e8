"""Who asked for a call: an immutable value made for each unit of work and handed down.

A chat turn, a job, a skill run, the heartbeat or `augure tools run` each start a `Caller`.
Whoever makes calls on behalf of another — a background release, a code-mode snippet, a
batch, a subagent, a skill, a report turn — extends it with `via`; nothing replaces it. So
the gates (scope, limits, approval) always see the whole chain (`chat>background`,
`job>code`, `task:NAME>code`), the tools allowed anywhere up the chain, and the approvals
the owner gave in this chat. docs/security.md ("Who asked") walks through every path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase

SEPARATOR = ">"


class Grants:
    """`Allow in this chat`: the (tool, canonical target) pairs the owner allowed in one chat
    until `/new` or a restart. One live object per chat, shared by every caller made there
    (the turn, its background work, its snippets), so a press covers the very next call."""

    def __init__(self) -> None:
        self._allowed: set[tuple[str, str]] = set()

    def covers(self, tool: str, target: str | None) -> bool:
        return target is not None and (tool, target) in self._allowed

    def add(self, tool: str, target: str) -> None:
        self._allowed.add((tool, target))

    def clear(self) -> None:
        self._allowed.clear()

    def __len__(self) -> int:
        return len(self._allowed)


class Reading:
    """What one unit of work (a turn, with its background work, snippets and subagents) has
    read: the outside sources, from the results' provenance, and the texts a link may be
    taken from verbatim. Live and shared like `Grants`: a page read by one call taints the
    next call of the same unit (docs/security.md, "No leak after outside content")."""

    def __init__(
        self,
        owner: Iterable[str] = (),
        sources: Iterable[str] = (),
        earlier: Callable[[Reading], None] | None = None,
    ) -> None:
        self.owner = list(owner)  # what the owner wrote: their links are their own choice
        self.sources: set[str] = set(sources)  # outside sources read so far
        self.trusted: list[str] = []  # results with no outside content
        self.outside: list[tuple[str, str]] = []  # results from outside, with their source
        self.fetches = 0  # fetches to hosts named only in outside content
        # Reads what came before the unit (its conversation) when first asked: most turns
        # never make a call the check looks at, and need not scan their history.
        self._earlier = earlier

    def _caught_up(self) -> None:
        if self._earlier is not None:
            earlier, self._earlier = self._earlier, None
            earlier(self)

    @property
    def tainted(self) -> bool:
        self._caught_up()
        return bool(self.sources)

    def read(self, text: str, source: str | None) -> None:
        """A result this unit received, with its provenance."""
        if source is None:
            self.trusted.append(text)
        else:
            self.sources.add(source)
            self.outside.append((text, source))

    def chosen_by_owner(self, text: str) -> bool:
        self._caught_up()
        return any(text in said for said in self.owner)

    def given(self, text: str) -> bool:
        """Found verbatim in what the owner wrote or in a result of this unit."""
        self._caught_up()
        seen = (*self.owner, *self.trusted, *(found for found, _ in self.outside))
        return any(text in one for one in seen)

    def listed(self, text: str, source: str) -> bool:
        """Found verbatim in a result from `source` (a search listing)."""
        self._caught_up()
        return any(text in found for found, where in self.outside if where == source)

    def named_outside_only(self, host: str) -> bool:
        """A host that only outside content names (not the owner, not a trusted result)."""
        self._caught_up()
        named = re.compile(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", re.IGNORECASE)
        return not any(named.search(seen) for seen in (*self.owner, *self.trusted))


@dataclass(frozen=True)
class Caller:
    # The origin chain, first link first: who started the work, then each hand it passed to.
    chain: tuple[str, ...] = ("chat",)
    chat_id: str | None = None
    turn_id: str | None = None
    # When set, only these tools may be called (a skill's declared tools, a subagent's);
    # extending the chain can narrow it, never widen it.
    allowed_tools: frozenset[str] | None = None
    # The audit record of the call this one is made from (a batch's, a snippet's), if any.
    parent: str | None = None
    # Approvals in force for this chat (`Allow in this chat`); None where no owner chats.
    grants: Grants | None = field(default=None, compare=False)
    # What this unit of work has read; None where the owner types every call (the CLI).
    reading: Reading | None = field(default=None, compare=False)

    @classmethod
    def of(
        cls,
        origin: str | Iterable[str],
        *,
        chat_id: str | None = None,
        turn_id: str | None = None,
        allowed_tools: Collection[str] | None = None,
        grants: Grants | None = None,
        reading: Reading | None = None,
    ) -> Caller:
        """A caller from a chain given as links or as its `a>b` spelling."""
        links = origin.split(SEPARATOR) if isinstance(origin, str) else tuple(origin)
        allowed = frozenset(allowed_tools) if allowed_tools is not None else None
        return cls(tuple(links), chat_id, turn_id, allowed, grants=grants, reading=reading)

    @property
    def origin(self) -> str:
        """The chain as the audit record and the approval request show it."""
        return SEPARATOR.join(self.chain)

    @property
    def started_by(self) -> str:
        return self.chain[0]

    def via(self, link: str, *, tools: Collection[str] | None = None) -> Caller:
        """The caller one hand further down: the chain extended, the allowed tools narrowed
        to `tools` when given (and to what was already allowed)."""
        allowed = self.allowed_tools
        if tools is not None:
            narrowed = frozenset(tools)
            allowed = narrowed if allowed is None else allowed & narrowed
        return replace(self, chain=(*self.chain, link), allowed_tools=allowed)

    def made_from(self, invocation: str) -> Caller:
        return replace(self, parent=invocation)

    def binds(self, patterns: Iterable[str]) -> bool:
        """A profile's `origins` bind when any pattern matches any link of the chain; a link
        `task:NAME` or `skill:ID` is also matched by its kind alone (`task`, `skill`)."""
        names = [n for link in self.chain for n in _names(link)]
        return any(fnmatchcase(name, pattern) for pattern in patterns for name in names)


def _names(link: str) -> tuple[str, ...]:
    kind, colon, _ = link.partition(":")
    return (link, kind) if colon else (link,)
