"""What a tool call produced, as data; and the one place it becomes the text the model reads.

A result travels structured through the executor, code mode, skills and the audit record:
its status, its content, where the content came from (provenance), what it loaded and what
it made. Nothing parses text back. `render` turns it into the tool message at the end:
untrusted marking, the truncation notice and the wording of
docs/reference/approvals.md#what-the-model-is-told are decided there only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal

from augure.common.errors import NotDone

UNTRUSTED_OPEN = '<untrusted_content source="{source}">'
UNTRUSTED_CLOSE = "</untrusted_content>"
# The tag's name in any letter case: the content must not be able to close the marker.
_TAG_NAME = re.compile("untrusted_content", re.IGNORECASE)
# A whole marked block, as `wrap_untrusted` writes it (a text may hold several).
MARKED = re.compile(
    re.escape(UNTRUSTED_OPEN).replace(re.escape("{source}"), '[^"]*')
    + ".*?"
    + re.escape(UNTRUSTED_CLOSE),
    re.DOTALL,
)

# The marker's opening at the start of a result as stored, with the source it names.
OPENED = re.compile(re.escape(UNTRUSTED_OPEN).replace(re.escape("{source}"), '([^"]*)'))
# How an error result starts as the model reads it (`plain`).
ERROR = "Error: "
# The source of a message the owner forwarded: its sender's words, not the owner's.
FORWARDED = "forwarded from "


class Status(StrEnum):
    OK = "ok"
    ERROR = "error"  # the tool ran, or tried to, and failed
    REJECTED = "rejected"  # the owner (or a rule of theirs) said no
    REFUSED = "refused"  # the system would not run it (changed since shown, a limit)


class ErrorKind(StrEnum):
    INVALID_CALL = "invalid_call"  # unknown tool, bad arguments: the model's mistake
    FAILED = "failed"
    TIMEOUT = "timeout"
    NOT_ALLOWED = "not_allowed"  # disabled by config, or outside the turn's declared tools


class ToolError(NotDone):
    """Raised by a tool to fail its call; the message is for the model, the kind for code."""

    def __init__(self, message: str, kind: ErrorKind = ErrorKind.FAILED) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Artifact:
    type: Literal["file", "image", "json"]
    name: str
    content: str | bytes


@dataclass(frozen=True)
class Cut:
    """The content was longer than the model gets at once; the rest is saved."""

    invocation: str
    shown: int


@dataclass
class ToolResult:
    status: Status
    content: str
    artifacts: list[Artifact] = field(default_factory=list)
    # Provenance: the tool whose outside content this is (None: trusted). Kept on everything
    # derived from it, so the marking follows the content wherever it goes.
    source: str | None = None
    kind: ErrorKind | None = None
    loaded: frozenset[str] = frozenset()  # tools this call made callable (load_tools)
    cut: Cut | None = None

    @classmethod
    def ok(
        cls,
        content: str,
        artifacts: list[Artifact] | None = None,
        *,
        source: str | None = None,
        loaded: frozenset[str] = frozenset(),
    ) -> ToolResult:
        return cls(Status.OK, content, artifacts or [], source=source, loaded=loaded)

    @classmethod
    def error(
        cls,
        message: str,
        kind: ErrorKind = ErrorKind.FAILED,
        *,
        artifacts: list[Artifact] | None = None,
        source: str | None = None,
    ) -> ToolResult:
        return cls(Status.ERROR, message, artifacts or [], source=source, kind=kind)

    @classmethod
    def rejected(cls, message: str) -> ToolResult:
        return cls(Status.REJECTED, message)

    @classmethod
    def refused(cls, message: str) -> ToolResult:
        return cls(Status.REFUSED, message)

    @property
    def success(self) -> bool:
        return self.status is Status.OK

    @property
    def prunable(self) -> bool:
        """A call the model got wrong: dropped from the history once the model has seen it,
        so it does not cost tokens on every later turn."""
        return self.kind is ErrorKind.INVALID_CALL

    @property
    def output(self) -> str:
        """The text the model reads (and a person sees at the CLI)."""
        return render(self)

    def with_content(self, content: str) -> ToolResult:
        return replace(self, content=content)


def render(result: ToolResult) -> str:
    text = plain(result)
    if result.source is not None:
        text = wrap_untrusted(text, result.source)
    return text


def plain(result: ToolResult) -> str:
    """The result as `render` gives it, without the untrusted marker: for a store that keeps
    the provenance beside it (a background task's row), to be marked again when read."""
    text = result.content
    if result.cut is not None:
        shown, total = result.cut.shown, len(text)
        text = (
            f"{text[:shown]}\n\n[Output cut: showing {shown} of {total} characters. Read on "
            f'with read_output(id="{result.cut.invocation}", offset={shown}).]'
        )
    if result.status is Status.ERROR:
        text = f"{ERROR}{text}"
    return text


def relayed_source(via: str, sources: set[str]) -> str | None:
    """The provenance of a result built from others' (a batch's, a snippet's, a subagent's):
    outside content in any of them makes the whole outside content, naming where it came
    from, so no part of it reaches the model unmarked."""
    return f"{via}: {', '.join(sorted(sources))}" if sources else None


def wrap_untrusted(text: str, source: str) -> str:
    # Content may try to close the wrapper early and speak as the owner: defuse the tag,
    # in every letter case (a model reads </UNTRUSTED_CONTENT> as the same tag).
    inner = _TAG_NAME.sub("untrusted-content", text)
    return f"{UNTRUSTED_OPEN.format(source=source)}\n{inner}\n{UNTRUSTED_CLOSE}"
