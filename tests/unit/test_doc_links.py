"""Every link between the project's own pages resolves: the file exists and, where the link
names a section, the page has a heading with that anchor (GitHub's spelling of it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "SECURITY.md",
        *ROOT.glob("docs/**/*.md"),
        *ROOT.glob("bench/**/*.md"),
        *ROOT.glob("skills/**/*.md"),
    ]
)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def _lines(page: Path) -> list[str]:
    """The page's lines outside code blocks."""
    kept, fenced = [], False
    for line in page.read_text().splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return kept


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`|\*", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _lines(page):
        if match := re.match(r"#{1,6}\s+(.*)", line):
            slug = anchor(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def internal_links() -> list[tuple[Path, str]]:
    links = []
    for page in PAGES:
        prose = "\n".join(re.sub(r"`[^`]*`", "", line) for line in _lines(page))
        for target in LINK.findall(prose):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):
                links.append((page, target))
    return links


@pytest.mark.parametrize(
    ("page", "target"),
    internal_links(),
    ids=lambda value: str(value.relative_to(ROOT)) if isinstance(value, Path) else value,
)
def test_every_internal_link_resolves(page: Path, target: str) -> None:
    path, _, section = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    assert linked.exists(), f"{page.relative_to(ROOT)} links to {target}: no such file"
    if section and linked.suffix == ".md":
        assert section in anchors(linked), (
            f"{page.relative_to(ROOT)} links to {target}: {linked.name} has no such section"
        )


def test_the_link_check_reads_the_pages() -> None:
    assert len(internal_links()) > 50
    assert anchor("Who asked: the caller chain (`augure/caller.py`)") == (
        "who-asked-the-caller-chain-augurecallerpy"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_no_heading_runs_into_another(page: Path) -> None:
    joined = [line for line in _lines(page) if re.match(r"#{1,6}\s.*\S#{2,6}\s", line)]
    assert not joined, f"{page.relative_to(ROOT)}: two headings on one line: {joined}"
