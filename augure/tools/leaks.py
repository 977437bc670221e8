"""No leak after outside content: the executor's `egress` step.

A personal assistant holds private data, reads outside content, and can reach the outside:
once a unit of work has read a page, a mail or an MCP result, a read-only call can carry the
owner's data out in anything it sends (a GET's URL and headers, a browser's address, typed
text and steps, an MCP tool's arguments). So, after outside content, each text a call sends
is judged by where it came from (`Reading`, augure/common/caller.py):

- a link is given only when something offered it, whole: the owner's words, a trusted result
  read before any outside content, or an outside result's link (an `href`, a bare URL, a
  search result). Any other link the model composed, and it asks;
- following a page's link to a host only outside content names is a choice that can spell
  data, so only `[approval] untrusted_fetches` such choices go unasked per unit, each weighed
  by how many links it chose among; a link only a message offered asks;
- words that are not a link ask unless the owner wrote them, or they repeat outside content
  (then they count like a step on a page);
- a link this unit already sent out goes again unasked: nothing new leaves.

docs/security.md, "No leak after outside content", says what this covers and what it does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

from augure.common import links
from augure.common.caller import Reading
from augure.config.approval import ApprovalConfig
from augure.tools.arguments import strings_in
from augure.tools.call import Call
from augure.tools.result import ToolResult

COMPOSED = "composed by the model after reading outside content"
COUNTED = "counted"  # goes unasked within the count
# What one unasked choice may say: among up to 2**8 links it is one fetch of the count;
# among more (a "codebook" page listing a link for every value) it weighs one more per
# byte, so the count bounds what the choices can spell, not only how many there are.
BITS_PER_FETCH = 8


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
    counted: str | None = None  # a call is one choice, however many of its texts count
    for text in leaving:
        why = _judged(reading, text)
        if why == COUNTED:
            counted = text if counted is None else counted
        elif why is not None:
            return Ask(why, text)
    if counted is not None:
        reading.fetches += weight(reading.choices())
        if reading.fetches > settings.untrusted_fetches:
            limit = settings.untrusted_fetches
            return Ask(f"more than {limit} fetches to sites only outside content named", counted)
    return None


def _judged(reading: Reading, text: str) -> str | None:
    """None: free to go; COUNTED: a choice among what outside content offered; otherwise
    why it asks."""
    if not text:
        return COUNTED  # a step on a page that may be anyone's (a click, a key press)
    link = links.link(text)
    if link is None:
        if reading.chosen_by_owner(text):
            return None
        if reading.echoes_outside(text):
            return COUNTED  # which part of the page was chosen can spell data
        if reading.copied_from_trusted(text):
            return "the owner's data, copied after reading outside content"
        return COMPOSED
    if link in reading.sent:
        return None  # this unit sent it out already, unchanged: nothing new leaves
    offered = reading.offered_by(link)
    if not offered:
        return COMPOSED
    if offered & {"owner", "trusted"} or not reading.named_outside_only(links.host(link)):
        return None  # the owner's choice of link, or of place
    if "listing" in offered:
        return None  # a search result: the search's choice, not a page's
    if offered == {"message"}:
        return "a link only a message offered, to a site only outside content named"
    return COUNTED


def read_back(reading: Reading, call: Call, result: ToolResult) -> None:
    """What a call that ran sent out, and the result it brought, with its provenance."""
    reading.sent_out(call.leaving)
    tool = call.the_tool
    # A result repeating its call's own words (a search's "No results for '<url>'") does
    # not offer them, and a relayed one (a snippet's output, a subagent's answer) offers
    # nothing: the calls inside it were read one by one, the rest is what a model wrote.
    reading.read(
        result.content,
        result.source,
        tool.offers,
        failed=not result.success,
        relayed=tool.relays,
        own=strings_in(call.arguments) if result.source and result.success else [],
    )


def weight(choices: int) -> int:
    """How many fetches of the count one choice among `choices` links is worth: one per
    byte it can say (among up to 256 links one, up to 65 536 two, and so on)."""
    return max(1, math.ceil(math.log2(max(choices, 1)) / BITS_PER_FETCH))


def decoded(text: str) -> str:
    """The link with its path and query decoded, so data hidden in them is plain to see; a
    link written without its scheme is shown without one."""
    schemeless = links.link(text) is not None and "://" not in text
    try:
        parts = urlsplit(("http://" if schemeless else "") + text.strip())
    except ValueError:
        return text
    if parts.scheme not in ("http", "https"):
        return text
    shown = f"{parts.netloc}{unquote(parts.path)}"
    if parts.query:
        shown += "?" + unquote_plus(parts.query)
    shown += f"#{unquote(parts.fragment)}" if parts.fragment else ""
    return shown if schemeless else f"{parts.scheme}://{shown}"
