"""The ports: what a channel implements and what the core hands it, on the ground floor.

Every layer that talks to the owner outside a turn (recovery, the scheduler, background work,
the heartbeat) and every channel that implements it meet here, so this module imports nothing
from augure: a channel reaches these types without importing the gate, and the gate, the
scheduler and recovery name the same port. See docs/architecture.md, "Channels".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol


class Attachment(Protocol):
    """A file a tool produced, as a channel reads it (augure.tools.result.Artifact is one)."""

    @property
    def type(self) -> str: ...  # "image", "file" or "json"
    @property
    def name(self) -> str: ...
    @property
    def content(self) -> str | bytes: ...


@dataclass(frozen=True)
class Sources:
    """The outside content a message's words drew on, named for the owner (a site's host, a
    forwarded message's sender). The core decides it; the channel shows it: links with their
    addresses, no link preview, and a last line naming them (docs/security.md, "The reply is
    a way out"). `known` is False where the sender cannot tell (a job's stored result, a
    notice): shown as outside content, with no line."""

    names: tuple[str, ...] = ()
    known: bool = True

    @property
    def outside(self) -> bool:
        return bool(self.names) or not self.known

    @property
    def line(self) -> str:
        """One short last line naming them (`from: example.com, mail`); empty without names."""
        if not self.names:
            return ""
        shown = ", ".join(self.names[:LINE_NAMES])
        more = len(self.names) - LINE_NAMES
        return f"from: {shown}" + (f" and {more} more" if more > 0 else "")


LINE_NAMES = 3  # the sources line stays one short line


NOT_KNOWN = Sources(known=False)


class Notifier(Protocol):
    """Delivers outside a turn: jobs' and background tasks' results, recovery notices."""

    async def send(self, chat_id: str, markdown: str, sources: Sources = NOT_KNOWN) -> None:
        """Send a message to that chat, or to the owner when the chat is not one of this
        channel's (a job created from the terminal)."""
        ...

    async def edit(self, chat_id: str, message_id: int, markdown: str) -> None:
        """Replace a message already shown (a streamed preview) with this text."""
        ...

    async def deliver(self, chat_id: str, artifact: Attachment) -> None:
        """Deliver a file a tool produced: an image as a photo, anything else as a file."""
        ...


REJECTED_BY_USER = "Tool call rejected by user."
TIMED_OUT = "Tool call rejected: approval timed out."


class Decision(StrEnum):
    APPROVED = "approved"
    REJECTED = "rejected"
    TIMED_OUT = "timed_out"


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    by: str
    reason: str | None = None
    always: bool = False
    # `Allow in this chat`: this call, and later ones with the same target in the same chat
    # until /new or a restart.
    in_chat: bool = False

    @property
    def approved(self) -> bool:
        return self.decision is Decision.APPROVED

    def message_for_model(self) -> str:
        if self.decision is Decision.TIMED_OUT:
            return TIMED_OUT
        return f"{REJECTED_BY_USER} Reason: {self.reason}" if self.reason else REJECTED_BY_USER

    def describe(self) -> str:
        """What happened, for the edited approval message."""
        if self.decision is Decision.APPROVED:
            if self.always:
                return "Always allowed (rule saved)"
            return "Allowed in this chat (until /new)" if self.in_chat else "Approved"
        if self.decision is Decision.TIMED_OUT:
            return "Rejected: no answer in time"
        return f"Rejected ({self.reason})" if self.reason else "Rejected"


@dataclass(frozen=True)
class ApprovalRequest:
    id: str
    tool: str
    arguments: dict[str, Any]  # already redacted
    chat_id: str | None
    origin: str
    rule_pattern: str | None  # offered as "Always allow" when set
    digest: str | None = None  # sha256 of exactly what is shown; a press approves that only
    in_chat: bool = False  # `Allow in this chat` is offered


class Decide(Protocol):
    """Settles one presented request; None when it was already decided."""

    async def __call__(
        self,
        decision: Decision,
        by: str,
        *,
        reason: str | None = None,
        always: bool = False,
        in_chat: bool = False,
    ) -> Verdict | None: ...


class Approver(Protocol):
    """Implemented by a channel: show a request to the owner, then show its outcome."""

    # Names the approver's reference in the audit row, so a later start concludes each
    # approver's message with its own reference.
    name: str

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any] | None:
        """Show the request. Returns a reference stored with it (e.g. the message id).

        `decide` answers this request from inside the channel (the terminal's y/N); a channel
        whose answers arrive as its own inbound events (a button press) may ignore it and call
        the gate's `decide` there instead."""
        ...

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        """Replace the request with its outcome (buttons gone)."""
        ...
