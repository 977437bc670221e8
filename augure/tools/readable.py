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

import json
import os
import re
import resource
import sys
from typing import TYPE_CHECKING
from urllib.parse import urljoin

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

PROGRAM = __file__
# The child's exit status when the parser ran out of the address space it was given; the
# same as the PDF reader's, which the parent side reads.
OUT_OF_MEMORY = 3
# How the child writes the text: a page headed by its title, a page without it, an e-mail.
TITLED, UNTITLED, MAIL = "titled", "untitled", "mail"

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
    return _frame(element, inside_content=element.find_parent(OWN_PARTS) is not None)


def _frame(element: Tag, *, inside_content: bool) -> bool:
    role = str(element.get("role") or "").lower()
    if element.name in FRAME or role in FRAME_ROLES:
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
    # Whether an element sits inside the content is carried down from its parent, met first
    # in document order: asking each element's ancestors instead costs the square of the
    # nesting depth, minutes for a page of 25,000 nested <header> tags.
    inside: dict[int, bool] = {}
    doomed = []
    for element in soup.find_all(True):
        parent = element.parent
        within = parent is not None and (inside.get(id(parent), False) or parent.name in OWN_PARTS)
        inside[id(element)] = within
        if _frame(element, inside_content=within) or is_hidden(element):
            doomed.append(element)
    for element in doomed:
        if not element.decomposed:
            element.decompose()


def _holding_text(soup: BeautifulSoup) -> set[int]:
    """The elements with visible text somewhere inside. Each string marks its ancestors up
    to the first one already marked, so the whole page is walked once; asking every link for
    its text instead costs the square of the nesting depth."""
    marked: set[int] = set()
    for string in soup.find_all(string=True):
        if not string.strip():
            continue
        for parent in string.parents:
            if id(parent) in marked:
                break
            marked.add(id(parent))
    return marked


def _absolute_links(soup: BeautifulSoup, url: str) -> None:
    """Links made absolute against the page's address; those that go nowhere a reader could
    follow (an anchor, a script) become their bare text."""
    with_text = _holding_text(soup)
    for link in soup.find_all("a"):
        href = str(link.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "data:")) or id(link) not in with_text:
            # Renamed, not unwrapped: unwrapping moves the children, a walk down to the
            # last descendant each time, the square of the depth for nested links.
            link.name, link.attrs = "span", {}
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
    try:
        text = converter.convert_soup(root)
    except RecursionError:
        # markdownify recurses once per level of nesting; a page nested deeper than Python's
        # stack allows still has its words, read without the Markdown.
        text = root.get_text("\n")
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return f"Title: {title}\n\n{text}" if title and titled else text


def mail_text(html: str) -> str:
    """An e-mail's HTML body as Markdown: all of it (a message has no site frame to drop)."""
    from markdownify import markdownify

    try:
        return markdownify(html, strip=["img"], heading_style="ATX")
    except RecursionError:  # nested deeper than the stack: the words, without the Markdown
        from bs4 import BeautifulSoup

        return BeautifulSoup(html, "html.parser").get_text("\n")


def is_html(content_type: str, body: bytes) -> bool:
    kind = content_type.split(";")[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml"):
        return True
    # A server that names no type: the page says what it is in its first bytes.
    start = body[:512].lstrip().lower()
    return not kind and start.startswith((b"<!doctype html", b"<html"))


# ---------------------------------------------------------------- the child


def _child(fd: int, chars: int, memory: int, mode: str) -> int:
    """Read `url\nhtml` from fd; write the readable text, cut at `chars`, as JSON."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        with os.fdopen(fd, "rb") as file:
            file.seek(0)
            url, _, html = file.read().decode("utf-8", "replace").partition("\n")
        text = mail_text(html) if mode == MAIL else readable(html, url, mode == TITLED)
        answer: dict[str, object] = {"text": text[:chars], "cut": len(text) > chars}
    except MemoryError:
        os._exit(OUT_OF_MEMORY)  # at once: unwinding further may need memory too
    except Exception as exc:  # a page the libraries choke on is an answer, not a crash
        answer = {"error": f"its readable text could not be made ({type(exc).__name__})"}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    fd, chars, memory = (int(argument) for argument in sys.argv[1:4])
    sys.exit(_child(fd, chars, memory, sys.argv[4]))
