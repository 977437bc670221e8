"""Tokens an `http` GET of a web page costs, raw HTML against its readable text.

Run: `python -m bench.pages` from the repository root, after `pip install -e '.[dev]'`.
For each page under tests/fixtures/pages/ (an article, a docs page, a forum thread, a
product page, search results; tests/fixtures/pages/README.md says where each comes from),
both texts are counted with cl100k_base (offline, as bench.prompt does) and the saving is
printed. It also checks that the readable text lost nothing a reader came for: every
heading and every paragraph of the page's content — outside the site's navigation, header,
footer and sidebars, and not hidden — is found in it, word for word. Exits 1 when a page
keeps less or saves less than the target.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from bs4 import BeautifulSoup, Tag

from augure.tools.readable import FRAME, INVISIBLE, is_frame, is_hidden, readable
from bench.prompt import cl100k

PAGES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pages"
TARGET_SAVING = 0.60
BLOCKS = ("h1", "h2", "h3", "h4", "h5", "h6", "p")


def _words(text: str) -> str:
    """Text with Markdown's marks, link targets and all spacing taken out, for a
    containment check."""
    return re.sub(r"[\s*_~`#>\\\[\]|]+", "", re.sub(r"\]\([^)\s]*\)", "]", text))


def content_blocks(html: str) -> list[str]:
    """The text of every heading and paragraph a reader of the page came for."""
    soup = BeautifulSoup(html, "html.parser")
    found = []
    for block in soup.find_all(BLOCKS):
        around = [block, *block.parents]
        if any(isinstance(e, Tag) and (is_frame(e) or is_hidden(e)) for e in around):
            continue
        if any(e.name in INVISIBLE for e in around if isinstance(e, Tag)):
            continue
        text = block.get_text(" ", strip=True)
        if text:
            found.append(text)
    return found


def measure(path: Path) -> tuple[int, int, list[str]]:
    html = path.read_text(encoding="utf-8")
    shown = readable(html, f"https://pages.example/{path.name}")
    count = cl100k().encode_ordinary
    kept = _words(shown)
    missing = [block for block in content_blocks(html) if _words(block) not in kept]
    return len(count(html)), len(count(shown)), missing


def main() -> int:
    failed = False
    print(f"{'page':<14}{'raw HTML':>10}{'readable':>10}{'saved':>8}  blocks kept")
    raw_total = shown_total = 0
    for path in sorted(PAGES.glob("*.html")):
        raw, shown, missing = measure(path)
        raw_total, shown_total = raw_total + raw, shown_total + shown
        saving = 1 - shown / raw
        blocks = len(content_blocks(path.read_text(encoding="utf-8")))
        kept = f"{blocks - len(missing)}/{blocks}"
        print(f"{path.stem:<14}{raw:>10}{shown:>10}{saving:>8.0%}  {kept}")
        for block in missing:
            print(f"    missing: {block[:100]}")
        failed |= bool(missing) or saving < TARGET_SAVING
    print(f"{'all':<14}{raw_total:>10}{shown_total:>10}{1 - shown_total / raw_total:>8.0%}")
    print(f"target: at least {TARGET_SAVING:.0%} fewer tokens on each page, every block kept")
    print(f"(frame elements left out: {', '.join(FRAME)}; tokens: cl100k_base)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
