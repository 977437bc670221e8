"""Fail when a package of the locked set is under the GPL or AGPL, or names no licence.

Run in the environment installed from requirements/lock.txt (`python scripts/check_licences.py`).
Augure is MIT: a GPL or AGPL dependency would bind its users to that licence's terms. The
LGPL (python-telegram-bot, PyGithub) is fine for a library imported unmodified.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

LOCK = Path(__file__).resolve().parents[1] / "requirements" / "lock.txt"
COPYLEFT = re.compile(r"\b(A?GPL|GNU (Affero )?General Public License)", re.I)
LESSER = re.compile(r"\b(LGPL|Lesser|Library)\b", re.I)
# Packages whose metadata names no licence, with the licence their source distributes.
KNOWN = {"imapclient": "BSD-3-Clause (its repository's LICENSE file)"}
# Packages that state a GPL and may be locked all the same, each with why.
ALLOWED = {
    # Its classifiers name both: the project is dual-licensed, and Augure takes it under Apache.
    "caldav": "GPL-3.0 or Apache-2.0, used under Apache-2.0",
    # The CalDAV server the calendar tests start as a process of its own: in the dev extra
    # only, never imported by Augure nor installed by runtime.txt (tests/unit/test_packaging.py).
    "radicale": "GPL-3.0, a test server run as its own process",
}


def locked_names(lock: Path) -> list[str]:
    pinned = re.findall(r"^([A-Za-z0-9_.-]+)==", lock.read_text(), re.M)
    return sorted({name.lower() for name in pinned})


def licences(metadata: importlib.metadata.PackageMetadata) -> list[str]:
    """Every licence the metadata states: the SPDX expression, the free text, classifiers."""
    found = [metadata.get("License-Expression") or "", (metadata.get("License") or "")[:200]]
    found += [c for c in metadata.get_all("Classifier") or [] if c.startswith("License ::")]
    return [text for text in found if text.strip() and text.strip() != "UNKNOWN"]


def verdict(name: str, stated: list[str]) -> str | None:
    """Why `name` may not be used, or None when it may."""
    if not stated:
        return None if name in KNOWN else "states no licence"
    if name in ALLOWED:
        return None
    copyleft = [text for text in stated if COPYLEFT.search(text) and not LESSER.search(text)]
    return f"is under {copyleft[0]!r}" if copyleft else None


def main() -> int:
    problems = []
    for name in locked_names(LOCK):
        try:
            metadata = importlib.metadata.metadata(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # locked for another platform or Python version, not installed here
        problem = verdict(name, licences(metadata))
        if problem:
            problems.append(f"{name} {problem}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
