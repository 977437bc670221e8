"""Who asked for a call: an immutable value made for each unit of work and handed down.

A chat turn, a job, a skill run, the heartbeat or `augure tools run` each start a `Caller`.
Whoever makes calls on behalf of another — a background release, a code-mode snippet, a
batch, a subagent, a skill, a report turn — extends it with `via`; nothing replaces it. So
the gates (scope, limits, approval) always see the whole chain (`chat>background`,
`job>code`, `task:NAME>code`), the tools allowed anywhere up the chain, and the approvals
the owner gave in this chat. docs/security.md ("Who asked") walks through every path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Literal

from augure.common import links

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


# What kind of thing offered a link: the owner's words, a trusted result read before any
# outside content, a page (a web page, a document, an MCP result), a search listing, or a
# message (a mail, someone else's chat message, an invitation, a forwarded message).
Offer = Literal["owner", "trusted", "page", "listing", "message"]
OUTSIDE_KINDS: tuple[Offer, ...] = ("page", "listing", "message")


@dataclass(frozen=True)
class _Result:
    text: str
    source: str | None
    kind: Offer
    failed: bool
    own: tuple[str, ...] = ()


class Reading:
    """What one unit of work (a turn, with its background work, snippets and subagents) has
    read: the outside sources, from the results' provenance, and the links each kind of
    result offered. Live and shared like `Grants`: a page read by one call taints the next
    call of the same unit (docs/security.md, "No leak after outside content").

    Provenance, not text, decides what a link is: after the first outside result, a
    trusted result (a memory file read back, a recall, a local file) offers nothing, and an
    error result never does, so text the model wrote cannot come back as given."""

    def __init__(
        self,
        owner: Iterable[str] = (),
        sources: Iterable[str] = (),
        earlier: Callable[[Reading], None] | None = None,
    ) -> None:
        self.owner = list(owner)  # what the owner wrote: their links are their own choice
        self.sources: set[str] = set(sources)  # outside sources read so far
        self.trusted: list[str] = []  # trusted results read before any outside content
        self.outside: list[tuple[str, str]] = []  # results from outside, with their source
        # Fetches to hosts named only in outside content, each weighed by how much its
        # choice could say (leaks.py); compared with `[approval] untrusted_fetches`.
        self.fetches = 0
        self._offers: dict[str, set[Offer]] = {}  # link (compared form) -> who offered it
        self._unscanned: list[_Result] = []  # outside results not yet scanned
        self._pages_per_host: Counter[str] = Counter()  # links pages offered, by host
        self.sent: set[str] = set()  # links this unit's calls already sent out
        self._outside_seen = bool(self.sources)
        self._queued: list[_Result] = []
        # Found once and kept while the texts they come from stay as they are.
        self._named: tuple[int, int, frozenset[str]] = (-1, -1, frozenset())
        self._linked: tuple[int, int, frozenset[str], frozenset[str]] = (
            -1,
            -1,
            frozenset(),
            frozenset(),
        )
        # Reads what came before the unit (its conversation) when first asked: most turns
        # never make a call the check looks at, and need not scan their history.
        self._earlier = earlier

    def _caught_up(self) -> None:
        if self._earlier is not None:
            earlier, self._earlier = self._earlier, None
            earlier(self)
            queued, self._queued = self._queued, []
            for result in queued:  # what the unit read meanwhile came after its history
                self._take(result)

    @property
    def tainted(self) -> bool:
        self._caught_up()
        return bool(self.sources)

    def read(
        self,
        text: str,
        source: str | None,
        kind: Offer = "page",
        *,
        failed: bool = False,
        relayed: bool = False,
        own: Iterable[str] = (),
    ) -> None:
        """A result this unit received, with its provenance: `source` names the outside
        content (None: trusted), `kind` what offered its links, `failed` an error result,
        `relayed` one made of others' results or of model-written text (a batch, a snippet's
        output, a subagent's answer), `own` the texts of the call that made it. Neither an
        error, nor a relayed result, nor a call's own words offer a link."""
        if source is not None:
            self.sources.add(source)
        result = _Result(text, source, kind, failed or relayed, tuple(own))
        if self._earlier is not None:
            self._queued.append(result)  # in order, after the history, once that is read
        else:
            self._take(result)

    def _take(self, result: _Result) -> None:
        if result.source is None:
            if not result.failed and not self._outside_seen:
                self.trusted.append(result.text)
            return
        self._outside_seen = True
        self.outside.append((result.text, result.source))
        if not result.failed:  # an error repeats what it was given: it offers nothing
            self._unscanned.append(result)

    def _scanned(self) -> dict[str, set[Offer]]:
        """The links outside results offered, found when a call first needs them: most
        units read pages and never send anything the check looks at."""
        self._caught_up()
        for result in self._unscanned:
            kind = result.kind
            own = {found for text in result.own for found in _links_of(text)}
            for offered in links.written_in(result.text):
                if offered in own:
                    continue
                kinds = self._offers.setdefault(offered, set())
                if kind == "page" and "page" not in kinds:
                    self._pages_per_host[links.host(offered)] += 1
                kinds.add(kind)
        self._unscanned.clear()
        return self._offers

    def sent_out(self, texts: Iterable[str]) -> None:
        """The texts a call that ran sent out: the links among them may go again unasked."""
        for text in texts:
            sent = links.link(text) if text else None
            if sent is not None:
                self.sent.add(sent)

    def offered_by(self, link: str) -> set[Offer]:
        """Who offered this link (in its compared form), exactly as written: the owner, a
        trusted result read before any outside content, or kinds of outside results."""
        found = set(self._scanned().get(link, ()))
        owner, trusted = self._links_given()
        if link in owner:
            found.add("owner")
        if link in trusted:
            found.add("trusted")
        return found

    def chosen_by_owner(self, text: str) -> bool:
        """Words the owner wrote (not a link: links are compared whole, `offered_by`)."""
        self._caught_up()
        return any(text in said for said in self.owner)

    def echoes_outside(self, text: str) -> bool:
        """Found verbatim in outside content: sending it back tells no one anything new,
        except by which part of it was chosen."""
        self._caught_up()
        return any(text in found for found, _ in self.outside)

    def copied_from_trusted(self, text: str) -> bool:
        self._caught_up()
        return any(text in found for found in self.trusted)

    def named_outside_only(self, host: str) -> bool:
        """A host that only outside content names (not the owner, not a trusted result)."""
        self._caught_up()
        owner, trusted = len(self.owner), len(self.trusted)
        if self._named[:2] != (owner, trusted):
            named: set[str] = set()
            for text in (*self.owner, *self.trusted):
                named |= links.hosts_named_in(text)
            self._named = (owner, trusted, frozenset(named))
        return host.lower() not in self._named[2]

    def choices(self) -> int:
        """How many links outside pages offered to hosts only outside content names: the
        choice each counted fetch makes among them (leaks.py weighs it)."""
        self._scanned()
        return sum(n for host, n in self._pages_per_host.items() if self.named_outside_only(host))

    def _links_given(self) -> tuple[frozenset[str], frozenset[str]]:
        """The links the owner wrote, and those trusted results read before any outside
        content gave."""
        if self._linked[:2] != (len(self.owner), len(self.trusted)):
            owner = frozenset(found for said in self.owner for found in links.said_in(said))
            trusted = frozenset(found for text in self.trusted for found in links.written_in(text))
            self._linked = (len(self.owner), len(self.trusted), owner, trusted)
        return self._linked[2], self._linked[3]


def _links_of(text: str) -> set[str]:
    """The links a call's text holds: the whole text as one, and any written inside it."""
    whole = links.link(text)
    return {*links.written_in(text), *([whole] if whole is not None else [])}


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
