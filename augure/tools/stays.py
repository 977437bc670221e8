"""No deferred leak: text a tainted unit leaves for later units asks the owner first.

A memory file is in every later prompt, a skill's description in every later prompt's
catalog and its code runs on its own: written after a page, either would carry the page's
instructions into turns that start clean, where a URL composed from the owner's data goes
out unasked. So once a unit has read outside content, a call that leaves such text asks,
unless every piece of it is the owner's own words. Jobs take the other way: they carry the
unit's sources (augure/scheduler/book.py). docs/security.md, "No deferred leak", says
which kind does which, and why.
"""

from __future__ import annotations

from collections.abc import Callable

from augure.common.caller import Reading
from augure.config.approval import ApprovalConfig

WHY = "left for later after reading outside content: later turns read it as standing text"


def assess(
    reading: Reading | None, staying: Callable[[], list[str]], settings: ApprovalConfig
) -> dict[str, str] | None:
    """What the approval request shows when the call must ask; None when it may go unasked.
    `staying` is asked only after outside content (it may read a file)."""
    if reading is None or settings.after_untrusted == "off" or not reading.tainted:
        return None
    new = [text for text in staying() if text.strip() and not reading.chosen_by_owner(text)]
    if not new:
        return None
    return {
        "after outside content": ", ".join(sorted(reading.sources)),
        "why it asks": WHY,
        "stays, new": "\n".join(new),
    }
