"""What the egress check costs after a real page, and what one choice among its links weighs.

Run: `python -m bench.egress` from the repository root, after `pip install -e '.[dev]'`.
For each page under tests/fixtures/pages/ (real pages, tests/fixtures/pages/README.md), its
readable text is read into a `Reading` as an `http` result would be; then one GET of a link
the page offered is judged (`leaks.assess`): the time of that first check (which finds the
page's links), of a later one, the links offered to hosts only outside content named, and
what one such choice weighs against `[approval] untrusted_fetches`. A "codebook" page of
10 000 links is measured the same way. Exits 1 when a check takes longer than the target.
docs/security.md, "No leak after outside content".
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from augure.common import links
from augure.common.caller import Reading
from augure.config.approval import ApprovalConfig
from augure.tools import leaks
from augure.tools.readable import readable

PAGES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pages"
TARGET_FIRST_MS = 250.0  # the first check after a page: it reads the page's links once
TARGET_LATER_MS = 1.0


def measure(name: str, text: str) -> tuple[float, float]:
    settings = ApprovalConfig(untrusted_fetches=1_000_000)  # every check runs to the count
    reading = Reading(owner=["research this for me"])
    reading.read(text, "http")
    offered = list(links.written_in(text))
    target = "http://" + offered[0] if offered else "https://elsewhere.example/"
    started = time.perf_counter()
    leaks.assess(reading, [target], settings)
    first = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    for _ in range(100):
        leaks.assess(reading, [target], settings)
    later = (time.perf_counter() - started) * 10
    choices = reading.choices()
    print(
        f"{name:<14} {len(text) // 1000:>5} kB {len(set(offered)):>6} links "
        f"{choices:>6} counted  weight {leaks.weight(choices)}  "
        f"first {first:7.2f} ms  later {later:6.3f} ms"
    )
    return first, later


def main() -> int:
    worst_first = worst_later = 0.0
    for path in sorted(PAGES.glob("*.html")):
        text = readable(path.read_text(encoding="utf-8"), f"https://pages.example/{path.name}")
        first, later = measure(path.name, text)
        worst_first, worst_later = max(worst_first, first), max(worst_later, later)
    codebook = " ".join(f"[{c:04}](https://e.example/c/{c:04})" for c in range(10_000))
    first, later = measure("codebook", codebook)
    worst_first, worst_later = max(worst_first, first), max(worst_later, later)
    ok = worst_first <= TARGET_FIRST_MS and worst_later <= TARGET_LATER_MS
    print(
        f"worst: first {worst_first:.1f} ms, later {worst_later:.3f} ms: {'ok' if ok else 'SLOW'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
