"""No leak after outside content: the executor's `egress` step.

A personal assistant holds private data, reads outside content, and can reach the outside:
once a unit of work has read a page, a mail or an MCP result, a read-only fetch can carry
the owner's data out in its URL. So, after outside content, a call that sends text to a place
(a GET's URL, a browser's address or typed text, a network-reading MCP tool's arguments) asks
the owner when that text was composed by the model — found verbatim neither in what the
owner wrote nor in a result of this unit — or when it goes to a host that only outside
content named, beyond `[approval] untrusted_fetches` such fetches per turn. Following a link
exactly as a page gave it stays unasked within that count, so browsing keeps working.
docs/security.md, "No leak after outside content", says what this covers and what it does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

from augure.common.caller import Reading
from augure.config.settings import ApprovalConfig

# A link from a search listing is the search itself, not a page's choice: not counted.
SEARCH = "web_search"


@dataclass(frozen=True)
class Ask:
    """Why a call must ask, and what the request shows about it."""

    why: str
    text: str

    def shown(self, reading: Reading) -> dict[str, Any]:
        return {
            "after outside content": ", ".join(sorted(reading.sources)),
            "why it asks": self.why,
            "sends, decoded": decoded(self.text) if self.text else "a step on the open page",
        }


def assess(reading: Reading | None, leaving: list[str], settings: ApprovalConfig) -> Ask | None:
    """None when the call may go unasked; the reason to ask otherwise."""
    if reading is None or not reading.tainted or settings.after_untrusted == "off":
        return None
    for text in leaving:
        if text and reading.chosen_by_owner(text):
            continue
        if text and not reading.given(text):
            return Ask("composed by the model after reading outside content", text)
        if text:  # a link as something gave it
            host = host_of(text)
            if host is None and not echoes_outside(reading, text):
                # Not a link, and only a trusted result (a memory file, a local file) holds
                # it: the owner's own data, copied out for a page that asked for it.
                return Ask("the owner's data, copied after reading outside content", text)
            if host is None or not reading.named_outside_only(host):
                continue
            if reading.listed(text, SEARCH):
                continue
        # A link only outside content named, or a step on a page (a click): each choice of
        # which one can spell out data, so only a few go unasked.
        reading.fetches += 1
        if reading.fetches > settings.untrusted_fetches:
            limit = settings.untrusted_fetches
            return Ask(f"more than {limit} fetches to sites only outside content named", text)
    return None


def echoes_outside(reading: Reading, text: str) -> bool:
    """Found verbatim in outside content: sending it back tells no one anything new."""
    return any(text in found for found, _ in reading.outside)


def host_of(text: str) -> str | None:
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        return None
    return parts.hostname if parts.scheme in ("http", "https") and parts.hostname else None


def decoded(text: str) -> str:
    """The URL with its path and query decoded, so data hidden in them is plain to see."""
    try:
        parts = urlsplit(text.strip())
    except ValueError:
        return text
    if parts.scheme not in ("http", "https"):
        return text
    shown = f"{parts.scheme}://{parts.netloc}{unquote(parts.path)}"
    if parts.query:
        shown += "?" + unquote_plus(parts.query)
    return shown + (f"#{unquote(parts.fragment)}" if parts.fragment else "")
