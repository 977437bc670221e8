"""Turn the model's Markdown into Telegram HTML messages.

Telegram accepts only a handful of HTML tags, rejects a message whose markup does not
parse, and caps a message at 4096 UTF-16 code units. So the Markdown is parsed with a
real CommonMark parser and every token is mapped onto that small tag set, with all text
escaped; long replies are cut along the source's own block structure so that every part
is a well-formed message on its own and its plain-text fallback is the exact source.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from augure.channels.telegram.markup import SHOW_ADDRESSES, Renderer, escape_html

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = [
    "TELEGRAM_LIMIT",
    "Chunk",
    "escape_html",
    "markdown_to_html",
    "render_chunks",
    "split_markdown",
    "utf16_len",
]

TELEGRAM_LIMIT = 4096
# Below this one escaped character plus its markup might not fit, and splitting could
# not make progress.
_MIN_LIMIT = 32
# What markdown-it's tab expansion can add to a line of an indented fence, at most.
_TAB_SLACK = 3


@functools.cache
def _parser() -> MarkdownIt:
    """Built for the first reply rather than at start: markdown-it is slow to import,
    and nothing before the first poll renders anything."""
    from markdown_it import MarkdownIt

    # Raw HTML off: whatever markup the model writes is shown as text, never interpreted.
    # A nesting cap of 40 allows ~19 nested lists; higher makes its worst cases slower.
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": 40})
    md.enable(["table", "strikethrough"])
    return md


_log = logging.getLogger(__name__)

Refs = Mapping[str, Any]
Piece = tuple[str, str]  # (markdown source, its Telegram HTML)


@dataclass(frozen=True)
class Chunk:
    html: str  # Telegram HTML (parse_mode="HTML") for this part
    plain: str  # the same content as plain text, sent if Telegram refuses the markup


def utf16_len(s: str) -> int:
    """Length in UTF-16 code units, the measure of Telegram's message limit."""
    # surrogatepass: a lone surrogate in model output must be counted, not crash us.
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _normalize(md: str) -> str:
    # Same line endings as markdown-it uses, so its line map indexes our lines.
    return md.replace("\r\n", "\n").replace("\r", "\n")


def _parse(src: str, env: dict[str, Any]) -> list[Token] | None:
    md = _parser()
    tokens = md.parse(src, env)
    # At the nesting cap markdown-it silently drops the rest of the text; None tells the
    # caller to send such a (never realistic) input as plain text instead.
    deep = any(t.level >= md.options.maxNesting - 1 for t in tokens)
    return None if deep else tokens


def _render(src: str, refs: Refs | None = None) -> str:
    # Reference definitions may live in another part; passing them keeps `[x][ref]` links.
    tokens = _parse(src, {"references": dict(refs)} if refs else {})
    if tokens is None:
        return escape_html(src.strip())
    return "\n\n".join(Renderer(tokens).blocks(0, len(tokens), False))


def markdown_to_html(md: str) -> str:
    """The whole text as Telegram HTML, with no length limit applied."""
    try:
        return _render(_normalize(md))
    except Exception:  # model output is untrusted; a renderer bug must not lose the reply
        _log.exception("markdown rendering failed; sending escaped text")
        return escape_html(md.strip())


def _trim(src: str) -> str:
    """Drop leading blank lines (keeping the first line's indent) and trailing space."""
    body = src.lstrip()
    return src[src.rfind("\n", 0, len(src) - len(body)) + 1 :].rstrip() if body else ""


def _measure(src: str, refs: Refs) -> tuple[str, int]:
    """`src`'s HTML as a part of its own, and the larger of its html and plain lengths."""
    plain = _trim(src)
    html = _render(src, refs) or escape_html(plain.strip())
    # Tags and entities only ever add length, so html within the limit implies the
    # visible text Telegram counts is too.
    return html, max(utf16_len(html), utf16_len(plain))


def _probe(src: str, limit: int, refs: Refs) -> str | None:
    html, size = _measure(src, refs)
    return html if size <= limit else None


def _fit(
    lo: int, hi: int, first: int, limit: int, measure: Callable[[int], tuple[str, int]]
) -> tuple[int, str]:
    """A large n in (lo, hi] whose part fits, trying `first` first: (n, html), or (lo, "").

    Interpolates on measured sizes (alternating with bisection to bound the number of
    renders) and settles for 90% full. The answer is always a measured success, so it
    holds where Markdown makes size non-monotonic (a cut may open or close a construct).
    """
    best, size_lo, size_hi, step = (lo, ""), 0, -1, 0  # size_hi < 0: hi not measured yet
    n = min(max(first, lo + 1), hi)
    while True:
        html, size = measure(n)
        if size <= limit:
            best, lo, size_lo = (n, html), n, size
            if n == hi or 10 * size >= 9 * limit:
                return best
        else:
            hi, size_hi = n, size
        top = hi if size_hi < 0 else hi - 1  # the largest n still worth measuring
        if top <= lo:
            return best
        step += 1
        slope = (max(size_hi, size * hi // n) - size_lo) / (hi - lo)
        guess = lo + int(0.97 * (limit - size_lo) / max(slope, 1e-9))
        n = min(max(guess if step % 2 else (lo + hi + 1) // 2, lo + 1), top)


def _ws_cut(s: str, k: int) -> int:
    """Move a cut inside a line back to whitespace if that keeps at least half."""
    ws = max(s.rfind(" ", 0, k), s.rfind("\t", 0, k))
    return ws + 1 if ws + 1 > k // 2 else k


def _split_lines(
    lines: list[str], limit: int, refs: Refs, prefer: Mapping[int, int], ratio: float = 1.0
) -> list[Piece]:
    """Split a too-long block on line boundaries (moving back to a cut `prefer` scores
    if there is one), and inside a line only when a single line cannot fit. `ratio`,
    html over source length, gives the first cut to try."""
    work, out, pos = list(lines), [], 0

    def measure_lines(m: int) -> tuple[str, int]:
        return _measure("\n".join(work[pos:m]), refs)

    def measure_chars(n: int) -> tuple[str, int]:
        return _measure(work[pos][: _ws_cut(work[pos], n)], refs)

    while pos < len(work):
        if not work[pos].strip():
            pos += 1  # blank lines at a cut point carry nothing
            continue
        k, k_first, size, budget = pos, pos, -1, 0.97 * limit / max(ratio, 1.0)
        while k < len(work) and size + 1 + utf16_len(work[k]) <= limit:
            size, k = size + 1 + utf16_len(work[k]), k + 1
            k_first += size <= budget
        m, html = _fit(pos, k, k_first, limit, measure_lines) if k > pos else (pos, "")
        nicer = [c for c in range(pos + (m - pos) // 2 + 1, m) if prefer.get(c)]
        if html and m < len(work) and nicer:
            c = max(nicer, key=lambda c: (prefer[c], c))
            if (alt := _probe("\n".join(work[pos:c]), limit, refs)) is not None:
                m, html = c, alt
        if html:
            out.append(("\n".join(work[pos:m]), html))
            pos = m
            continue
        line = work[pos]
        n, html = _fit(0, min(len(line), limit), int(budget), limit, measure_chars)
        k = _ws_cut(line, n) if html else 1  # for limit >= _MIN_LIMIT one character fits
        if line[:k].strip():
            out.append((line[:k].rstrip(), html or escape_html(line[:k].strip())))
        work[pos] = line[k:].lstrip()
    return out


def _split_fence(lines: list[str], tok: Token, limit: int, refs: Refs) -> list[Piece]:
    """Split a fenced code block, closing it at the end of each part and reopening it
    with the same fence and language at the start of the next."""
    opener, mark, words = lines[0], tok.markup, tok.info.split()
    indent = opener[: len(opener) - len(opener.lstrip(" "))]
    last = lines[-1].strip()
    closed = len(lines) > 1 and len(last) >= len(mark) and set(last) == {mark[0]}
    body = lines[1:-1] if closed else lines[1:]
    # The raw first word, so the reopened fence parses to the same language class.
    reopen = indent + mark + (words[0] if words and len(words[0]) <= 40 else "")
    closer = indent + mark
    head = max(utf16_len(opener), utf16_len(reopen))
    tail = max(utf16_len(closer), utf16_len(lines[-1]) if closed else 0)
    slack = _TAB_SLACK if indent else 0
    room_p = limit - head - tail - 2
    room_h = limit - utf16_len(_render(f"{opener}\nx\n{closer}")) + 1
    if min(room_p, room_h) < 16 or not body:
        return _split_lines(lines, limit, refs, {})

    groups: list[list[str]] = [[]]
    used_p = used_h = 0
    for line in body:
        while True:
            cost_p, cost_h = utf16_len(line) + 1, utf16_len(escape_html(line)) + 1 + slack
            if used_p + cost_p <= room_p and used_h + cost_h <= room_h:
                groups[-1].append(line)
                used_p, used_h = used_p + cost_p, used_h + cost_h
                break
            if groups[-1]:
                groups.append([])
                used_p = used_h = 0
                continue
            # A code line longer than a whole part: cut off what fills one.
            k, p, h = 0, 1, 1 + slack
            for ch in line:
                p, h = p + utf16_len(ch), h + utf16_len(escape_html(ch))
                if p > room_p or h > room_h:
                    break
                k += 1
            k = _ws_cut(line, max(k, 1))
            groups[-1].append(line[:k])
            groups.append([])
            line = line[k:]
    groups = [g for g in groups if g]
    while len(groups) > 1 and not "".join(groups[-1]).strip():
        groups.pop()  # trailing blank code lines at a cut point carry nothing
    out: list[Piece] = []
    for n, group in enumerate(groups):
        end = ([lines[-1]] if closed else []) if n == len(groups) - 1 else [closer]
        src = "\n".join([opener if n == 0 else reopen, *group, *end])
        if (html := _probe(src, limit, refs)) is None:
            # The estimate is conservative, so this is an unforeseen input (say a cut
            # that looks like a fence): a plain line split is still valid, just uglier.
            return _split_lines(lines, limit, refs, {})
        out.append((src, html))
    return out


Unit = tuple[int, int, str, int]  # first line, end line, html, token (-1 for a gap)


def _units(tokens: list[Token], renderer: Renderer, line_count: int) -> list[Unit]:
    """Each top-level block with its HTML rendered in full context, and the gaps between
    blocks (blank lines, reference definitions), which render to nothing."""
    units: list[Unit] = []
    cursor, i = 0, 0
    while i < len(tokens):
        if (span := tokens[i].map) and span[0] >= cursor:
            if span[0] > cursor:
                units.append((cursor, span[0], "", -1))
            units.append((span[0], max(span[1], span[0] + 1), renderer.block(i, False), i))
            cursor = units[-1][1]
        i = renderer.end[i] + 1
    units.append((cursor, line_count, "", -1))
    return units


@dataclass(frozen=True)
class _Block:
    """A top-level block too long for one part: its source lines, where they start in the
    message, its HTML and its token (-1 when it is no block)."""

    lines: list[str]
    start: int
    html: str
    token: int


def _split_block(
    block: _Block, tokens: list[Token], renderer: Renderer, limit: int, refs: Refs
) -> list[Piece]:
    lines, start, ti = block.lines, block.start, block.token
    if ti >= 0 and tokens[ti].type == "fence":
        return _split_fence(lines, tokens[ti], limit, refs)
    prefer = {}  # cut points worth a slightly emptier part
    for n in range(1, len(lines)):
        if not lines[n - 1].strip() and not lines[n].startswith("    "):
            prefer[n] = 1  # after a blank line, not into indented code
    for t in tokens[ti + 1 : renderer.end[ti]] if ti >= 0 else ():
        if t.map and t.nesting >= 0 and t.level == 1 and t.map[0] > start:
            prefer[t.map[0] - start] = 2  # a list item or quoted block
    ratio = utf16_len(block.html) / max(utf16_len("\n".join(lines)), 1)
    return _split_lines(lines, limit, refs, prefer, ratio)


def _split(md: str, limit: int) -> list[Piece]:
    src = _normalize(md)
    if not src.strip():
        return []
    limit = max(int(limit), _MIN_LIMIT)
    env: dict[str, Any] = {}
    tokens = _parse(src, env) or []  # too deep: one unit without HTML, sent as text
    refs: Refs = env.get("references", {})
    renderer, lines = Renderer(tokens), src.split("\n")
    out: list[Piece] = []
    cur_src: list[str] = []
    cur_html: list[str] = []
    size_p = size_h = 0
    for start, stop, html, ti in _units(tokens, renderer, len(lines)):
        text = "\n".join(lines[start:stop])
        pieces = [(text, html)]
        if not text.strip():
            if not cur_src or size_p + 1 + utf16_len(text) > limit:
                continue  # whitespace at a cut point is dropped
        elif utf16_len(text) > limit or utf16_len(html) > limit:
            block = _Block(lines[start:stop], start, html, ti)
            pieces = _split_block(block, tokens, renderer, limit, refs)
        for n, (p_src, p_html) in enumerate(pieces):
            add_p = utf16_len(p_src) + (1 if cur_src else 0)
            add_h = utf16_len(p_html) + (2 if p_html and size_h else 0)
            # Pieces of one split block already fill a part each; joining two would only
            # close and reopen a code fence inside the same message.
            if cur_src and (n or size_p + add_p > limit or size_h + add_h > limit):
                out.append((_trim("\n".join(cur_src)), "\n\n".join(h for h in cur_html if h)))
                cur_src, cur_html = [], []
                add_p, add_h = utf16_len(p_src), utf16_len(p_html)
                size_p = size_h = 0
            cur_src.append(p_src)
            cur_html.append(p_html)
            size_p, size_h = size_p + add_p, size_h + add_h
    if cur_src:
        out.append((_trim("\n".join(cur_src)), "\n\n".join(h for h in cur_html if h)))
    pieces = []
    for plain, html in out:
        # A part of nothing but reference definitions renders empty: show it as text.
        pieces += [(plain, html)] if html else _split_lines(plain.split("\n"), limit, refs, {})
    return pieces


def _safe_split(md: str, limit: int) -> list[Piece]:
    try:
        return _split(md, limit)
    except Exception:  # model output is untrusted; a splitter bug must not lose the reply
        _log.exception("markdown splitting failed; sending escaped text")
        text, step = md.strip(), max(int(limit), _MIN_LIMIT) // 5  # "&amp;" is 5 units
        parts = (text[k : k + step] for k in range(0, len(text), step))
        return [(p, escape_html(p.strip())) for p in parts if p.strip()]


def split_markdown(md: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """The Markdown source of each part `render_chunks` would send."""
    return [plain for plain, _ in _safe_split(md, limit)]


def render_chunks(md: str, limit: int = TELEGRAM_LIMIT, *, addresses: bool = False) -> list[Chunk]:
    """The messages to send, in order, each within `limit` (at least 32) UTF-16 units;
    with `addresses`, each link shows its address as text."""
    if _plain_line(md, limit):
        return [Chunk(html=md, plain=md)]
    showing = SHOW_ADDRESSES.set(addresses)
    try:
        return [Chunk(html=html, plain=plain) for plain, html in _safe_split(md, limit)]
    finally:
        SHOW_ADDRESSES.reset(showing)


# Most replies are a line of plain prose; parsing it is most of a simple turn's rendering
# (docs/performance.md). A line with none of these characters, nor the line-start markers
# below, renders to itself under CommonMark (tests/unit/test_render.py compares the two).
_MARKUP = frozenset("\\`*_[]<>&#~|\x00\t")
_LINE_START = re.compile(r"[-+=]|\d{1,9}[.)]")


def _plain_line(md: str, limit: int) -> bool:
    return (
        "\n" not in md
        and "\r" not in md
        and md == md.strip()
        and bool(md)
        and _MARKUP.isdisjoint(md)
        and not _LINE_START.match(md)
        and utf16_len(md) <= max(int(limit), _MIN_LIMIT)
    )
