"""An HTML page as the text a person reads: title, headings, paragraphs, lists, tables and
links as Markdown (docs/reference/tools.md#http).

Markup is most of a page's bytes and none of its meaning; sent raw it costs the model tokens
and buries the text. The page is parsed by BeautifulSoup with the standard library's parser
(no compiled dependency), the parts nobody reads are removed — scripts, styles, inline
icons, forms' controls, the site's navigation and footer, hidden elements — and markdownify
writes what is left as Markdown. Nothing is scored or guessed: a search page or a forum
thread keeps every result and every post, which a main-article extractor would drop.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

# Never text a reader sees.
INVISIBLE = (
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
    "link", "meta", "input", "button", "select", "textarea", "option", "picture", "video",
    "audio", "source", "img", "dialog",
)  # fmt: skip
# The site's frame around the content, by element and by ARIA role. A <header> or <footer>
# inside an article or a post is that article's own (its title, its author) and is kept.
FRAME = ("nav", "aside", "header", "footer")
FRAME_ROLES = ("navigation", "banner", "contentinfo", "complementary", "search", "menu")
OWN_PARTS = ("article", "main", "section")
HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def is_frame(element: Tag) -> bool:
    role = str(element.get("role") or "").lower()
    if element.name in FRAME or role in FRAME_ROLES:
        inside_content = element.find_parent(OWN_PARTS) is not None
        return not (element.name in ("header", "footer") and inside_content)
    return False


def is_hidden(element: Tag) -> bool:
    attributes = element.attrs or {}
    return (
        "hidden" in attributes
        or str(attributes.get("aria-hidden", "")).lower() == "true"
        or bool(HIDDEN_STYLE.search(str(attributes.get("style", ""))))
    )


def _prune(soup: BeautifulSoup) -> None:
    from bs4 import Comment

    for comment in soup.find_all(string=lambda node: isinstance(node, Comment)):
        comment.extract()
    for element in soup.find_all(INVISIBLE):
        element.decompose()
    # Collected first: removing an element while walking the tree would skip its siblings.
    doomed = [e for e in soup.find_all(True) if is_frame(e) or is_hidden(e)]
    for element in doomed:
        if not element.decomposed:
            element.decompose()


def _absolute_links(soup: BeautifulSoup, url: str) -> None:
    """Links made absolute against the page's address; those that go nowhere a reader could
    follow (an anchor, a script) become their bare text."""
    for link in soup.find_all("a"):
        href = str(link.get("href") or "").strip()
        if (
            not href
            or href.startswith(("#", "javascript:", "data:"))
            or not link.get_text().strip()
        ):
            link.unwrap()
            continue
        link.attrs = {"href": urljoin(url, href)}


def readable(html: str, url: str, titled: bool = True) -> str:
    """The page at url as Markdown, headed by its title unless the caller names it."""
    # Imported on first use: a page is not read at every start, and the parser costs time.
    from bs4 import BeautifulSoup
    from markdownify import STRIP, MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    _prune(soup)
    _absolute_links(soup, url)
    root = soup.body or soup
    converter = MarkdownConverter(heading_style="ATX", bullets="-", strip_document=STRIP)
    text = converter.convert_soup(root)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return f"Title: {title}\n\n{text}" if title and titled else text


def is_html(content_type: str, body: bytes) -> bool:
    kind = content_type.split(";")[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml"):
        return True
    # A server that names no type: the page says what it is in its first bytes.
    start = body[:512].lstrip().lower()
    return not kind and start.startswith((b"<!doctype html", b"<html"))
