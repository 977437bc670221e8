"""What an approval request shows, and the digest that binds the decision to it
(docs/reference/approvals.md#what-an-approval-binds).

The owner decides on text: it must read the same to them as to the machine. Control and
bidirectional-formatting characters (a right-to-left override can make `moc.live` read as
`evil.com`) are shown as `\\uXXXX` escapes, never rendered. The digest covers exactly what
was shown, so a press can be checked against what would run now.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from typing import Any

# Categories that change how text reads without being visible: controls, formats (bidi,
# zero-width), line and paragraph separators, private use and unassigned code points.
INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"})


def visible(text: str) -> str:
    """`text` with every invisible or direction-changing character as a `\\uXXXX` escape."""
    return "".join(_escape(c) if unicodedata.category(c) in INVISIBLE else c for c in text)


def _escape(char: str) -> str:
    point = ord(char)
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def arguments_text(arguments: dict[str, Any]) -> str:
    """Indented JSON for a person: line breaks inside values stay escaped (`\\n`), and the
    rest of what could hide or reorder text is escaped too."""
    dumped = json.dumps(arguments, ensure_ascii=False, indent=2)
    # json.dumps escaped C0 controls already; the layout's own newlines are kept.
    return "\n".join(visible(line) for line in dumped.split("\n"))


def digest(shown: dict[str, Any]) -> str:
    """sha256 of what the owner was shown (keys sorted, so equal content, equal digest)."""
    canonical = json.dumps(shown, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
