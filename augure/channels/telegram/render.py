"""Turn the model's Markdown into Telegram HTML messages.

Telegram accepts only a handful of HTML tags, rejects a message whose markup does not
parse, and caps a message at 4096 UTF-16 code units. So the Markdown is parsed with a
real CommonMark parser and every token is mapped onto that small tag set, with all text
escaped; long replies are cut along the source's own block structure so that every part
is a well-formed message on its own and its plain-text fallback is the exact source.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
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
# Below this a single escaped character plus its markup might not fit, and splitting
# could not make progress.
_MIN_LIMIT = 32
_SAFE_SCHEMES = ("http://", "https://", "tg://", "mailto:")
_INLINE_TAGS = {"strong": "b", "em": "i", "s": "s"}
_HR = "———"
# Upper bound of what markdown-it's tab expansion can add to an indented fence line.
_TAB_SLACK = 3

# Raw HTML off: whatever markup the model writes is shown as text, never interpreted.
_md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_log = logging.getLogger(__name__)

Refs = Mapping[str, Any]


@dataclass(frozen=True)
class Chunk:
    html: str  # Telegram HTML (parse_mode="HTML") for this part
    plain: str  # the same content as plain text, sent if Telegram refuses the markup


def escape_html(s: str, *, quote: bool = False) -> str:
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace('"', "&quot;") if quote else s


def utf16_len(s: str) -> int:
    # surrogatepass: a lone surrogate in model output must be counted, not crash us.
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _safe_href(url: str) -> bool:
    return url.lower().startswith(_SAFE_SCHEMES)


def _plain_inline(children: Sequence[Token] | None) -> str:
    out: list[str] = []
    for c in children or ():
        if c.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif c.type == "image":
            out.append(_plain_inline(c.children))
        else:
            out.append(c.content)
    return "".join(out)


def _close_tag(out: list[str], opened: str, tag: str) -> None:
    # An element left empty (e.g. `**![](x)**`) is dropped rather than sent as `<b></b>`.
    if out and out[-1] == opened:
        out.pop()
    else:
        out.append(f"</{tag}>")


class _Renderer:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.end = list(range(len(tokens)))
        stack: list[int] = []
        for i, t in enumerate(tokens):
            if t.nesting == 1:
                stack.append(i)
            elif t.nesting == -1 and stack:
                self.end[stack.pop()] = i

    def blocks(self, start: int, stop: int, quoted: bool) -> list[str]:
        out: list[str] = []
        i = start
        while i < stop:
            html = self.block(i, quoted)
            if html:
                out.append(html)
            i = self.end[i] + 1
        return out

    def block(self, i: int, quoted: bool) -> str:
        t, end = self.tokens[i], self.end[i]
        kind = t.type
        if kind in ("paragraph_open", "heading_open"):
            nxt = self.tokens[i + 1] if i + 1 < end else None
            inner = self.inline(nxt) if nxt is not None and nxt.type == "inline" else ""
            html = f"<b>{inner}</b>" if kind == "heading_open" and inner.strip() else inner
        elif kind == "blockquote_open":
            # Telegram rejects nested blockquotes, so inner quotes merge into the outer one.
            inner = "\n\n".join(self.blocks(i + 1, end, True))
            html = inner if quoted or not inner else f"<blockquote>{inner}</blockquote>"
        elif kind in ("bullet_list_open", "ordered_list_open"):
            html = self.list(i, quoted)
        elif kind in ("fence", "code_block"):
            html = self.code(t)
        elif kind == "table_open":
            html = self.table(i)
        elif kind == "hr":
            html = _HR
        elif kind == "inline":
            html = self.inline(t)
        else:  # html_block and anything unforeseen: shown as text, never passed through
            html = escape_html(t.content)
        return html.strip()

    def list(self, i: int, quoted: bool) -> str:
        t, end = self.tokens[i], self.end[i]
        ordered = t.type == "ordered_list_open"
        try:
            n = int(t.attrGet("start") or 1)
        except (TypeError, ValueError):
            n = 1
        tight = all(
            p.hidden
            for p in self.tokens[i:end]
            if p.type == "paragraph_open" and p.level == t.level + 2
        )
        sep = "\n" if tight else "\n\n"
        items: list[str] = []
        j = i + 1
        while j < end:
            if self.tokens[j].type == "list_item_open":
                marker = f"{n}. " if ordered else "• "
                pad = " " * len(marker)
                lines = sep.join(self.blocks(j + 1, self.end[j], quoted)).split("\n")
                rest = "".join("\n" + (pad + ln if ln else "") for ln in lines[1:])
                items.append((marker + lines[0] + rest).rstrip())
                n += 1
            j = self.end[j] + 1
        return sep.join(items)

    def code(self, t: Token) -> str:
        text = t.content.rstrip("\n")
        if not text.strip():
            return ""
        info = unescapeAll(t.info).strip() if t.type == "fence" else ""
        if not info:
            return f"<pre>{escape_html(text)}</pre>"
        lang = escape_html(info.split()[0], quote=True)
        return f'<pre><code class="language-{lang}">{escape_html(text)}</code></pre>'

    def table(self, i: int) -> str:
        rows: list[list[str]] = []
        aligns: list[str] = []
        for j in range(i, self.end[i]):
            t = self.tokens[j]
            if t.type == "tr_open":
                rows.append([])
            elif t.type in ("th_open", "td_open") and rows:
                if len(rows) == 1:
                    aligns.append(str(t.attrGet("style") or ""))
                cell = self.tokens[j + 1]
                rows[-1].append(
                    _plain_inline(cell.children).strip() if cell.type == "inline" else ""
                )
        if not rows:
            return ""
        ncol = max(len(r) for r in rows)
        aligns += [""] * (ncol - len(aligns))
        widths = [max((len(r[c]) if c < len(r) else 0) for r in rows) for c in range(ncol)]

        def fmt(row: list[str]) -> str:
            cells = []
            for c, w in enumerate(widths):
                v = row[c] if c < len(row) else ""
                if "right" in aligns[c]:
                    cells.append(v.rjust(w))
                elif "center" in aligns[c]:
                    cells.append(v.center(w))
                else:
                    cells.append(v.ljust(w))
            return " | ".join(cells).rstrip()

        lines = [fmt(rows[0]), "-+-".join("-" * w for w in widths), *map(fmt, rows[1:])]
        return f"<pre>{escape_html(chr(10).join(lines))}</pre>"

    def inline(self, tok: Token) -> str:
        out: list[str] = []
        links: list[str | None] = []  # escaped href of each open link, None if dropped
        for c in tok.children or ():
            ty = c.type
            if ty in ("softbreak", "hardbreak"):
                out.append("\n")  # chat text keeps the model's line breaks
            elif ty == "code_inline":
                if c.content:
                    out.append(f"<code>{escape_html(c.content)}</code>")
            elif ty.endswith("_open") and ty[:-5] in _INLINE_TAGS:
                out.append(f"<{_INLINE_TAGS[ty[:-5]]}>")
            elif ty.endswith("_close") and ty[:-6] in _INLINE_TAGS:
                tag = _INLINE_TAGS[ty[:-6]]
                _close_tag(out, f"<{tag}>", tag)
            elif ty == "link_open":
                href = str(c.attrGet("href") or "")
                ok = _safe_href(href) and not any(links)
                links.append(escape_html(href, quote=True) if ok else None)
                if ok:
                    out.append(f'<a href="{links[-1]}">')
            elif ty == "link_close":
                href_esc = links.pop() if links else None
                if href_esc is not None:
                    if out and out[-1] == f'<a href="{href_esc}">':
                        out.append(href_esc)  # `[](url)`: show the address, not nothing
                    out.append("</a>")
            elif ty == "image":
                alt = escape_html(_plain_inline(c.children))
                src = str(c.attrGet("src") or "")
                if _safe_href(src) and not any(links):
                    src_esc = escape_html(src, quote=True)
                    out.append(f'<a href="{src_esc}">{alt or src_esc}</a>')
                else:
                    out.append(alt)
            else:  # text, text_special, html_inline, ...: all plain text
                out.append(escape_html(c.content))
        return "".join(out)


def _normalize(md: str) -> str:
    # Same line endings as markdown-it uses, so its line map indexes our lines.
    return md.replace("\r\n", "\n").replace("\r", "\n")


def _render(src: str, refs: Refs | None = None) -> str:
    # Reference definitions may live in another part; passing them keeps `[x][ref]` links.
    env: dict[str, Any] = {"references": dict(refs)} if refs else {}
    tokens = _md.parse(src, env)
    return "\n\n".join(_Renderer(tokens).blocks(0, len(tokens), False))


def markdown_to_html(md: str) -> str:
    try:
        return _render(_normalize(md))
    except Exception:  # model output is untrusted; a renderer bug must not lose the reply
        _log.exception("markdown rendering failed; sending escaped text")
        return escape_html(md.strip())


def _trim(src: str) -> str:
    """Drop leading blank lines (keeping the first line's indent) and trailing space."""
    body = src.lstrip()
    if not body:
        return ""
    return src[src.rfind("\n", 0, len(src) - len(body)) + 1 :].rstrip()


def _measure(src: str, refs: Refs) -> tuple[str, int]:
    """The HTML for `src` as a part of its own, and the larger of its two lengths."""
    plain = _trim(src)
    html = _render(src, refs) or escape_html(plain.strip())
    # Tags and entities only ever add length, so html within the limit implies the
    # visible text Telegram counts is too.
    return html, max(utf16_len(html), utf16_len(plain))


def _probe(src: str, limit: int, refs: Refs) -> str | None:
    html, size = _measure(src, refs)
    return html if size <= limit else None


def _fit(
    lo: int, hi: int, limit: int, measure: Callable[[int], tuple[str, int]]
) -> tuple[int, str | None]:
    """A large n in (lo, hi] whose part fits, trying hi first; (lo, None) if none does.

    Interpolates on measured sizes (alternating with bisection to bound the number of
    renders) and settles for 90% full. The result is always a measured success, so it
    stays correct where Markdown makes length non-monotonic (a cut may open or close a
    construct)."""
    best: tuple[int, str | None] = (lo, None)
    size_lo, size_hi, n, step = 0, 0, hi, 0
    while True:
        html, size = measure(n)
        if size <= limit:
            best, lo, size_lo = (n, html), n, size
            if n == hi or 10 * size >= 9 * limit:
                return best
        else:
            hi, size_hi = n, size
        if hi - lo <= 1:
            return best
        step += 1
        if step % 2:
            guess = lo + int(0.97 * (limit - size_lo) * (hi - lo) / max(size_hi - size_lo, 1))
        else:
            guess = (lo + hi) // 2
        n = min(max(guess, lo + 1), hi - 1)


def _ws_cut(s: str, k: int) -> int:
    """Move a cut inside a line back to whitespace if that keeps at least half."""
    ws = max(s.rfind(" ", 0, k), s.rfind("\t", 0, k))
    return ws + 1 if ws + 1 > k // 2 else k


def _split_lines(
    lines: list[str], limit: int, refs: Refs, prefer: Mapping[int, int]
) -> list[tuple[str, str]]:
    """Split a too-long block on line boundaries (preferring `prefer`'s scored cut
    points), and only inside a line when a single line cannot fit."""
    work, out, pos = list(lines), [], 0

    def measure_lines(m: int) -> tuple[str, int]:
        return _measure("\n".join(work[pos:m]), refs)

    def measure_chars(n: int) -> tuple[str, int]:
        return _measure(work[pos][:n], refs)

    while pos < len(work):
        if not work[pos].strip():
            pos += 1  # blank lines at a cut point carry nothing
            continue
        k, size = pos, -1
        while k < len(work) and size + 1 + utf16_len(work[k]) <= limit:
            size += 1 + utf16_len(work[k])
            k += 1
        m, html = _fit(pos, k, limit, measure_lines) if k > pos else (pos, None)
        if html is not None and m < len(work):
            nicer = [c for c in range(pos + (m - pos) // 2 + 1, m) if prefer.get(c, 0)]
            if nicer:
                c = max(nicer, key=lambda c: (prefer[c], c))
                alt = _probe("\n".join(work[pos:c]), limit, refs)
                if alt is not None:
                    m, html = c, alt
        if html is not None:
            out.append(("\n".join(work[pos:m]), html))
            pos = m
            continue
        line = work[pos]
        k, html = _fit(0, min(len(line), limit), limit, measure_chars)
        if html is None:  # cannot happen for limit >= _MIN_LIMIT, but never loop forever
            k, html = 1, escape_html(line[:1])
        w = _ws_cut(line, k)
        if w < k and line[:w].strip() and (alt := _probe(line[:w], limit, refs)) is not None:
            k, html = w, alt
        out.append((line[:k].rstrip(), html))
        work[pos] = line[k:].lstrip()
    return out


def _is_closing_fence(line: str, mark: str) -> bool:
    body = line.strip()
    indent = len(line) - len(line.lstrip(" "))
    return indent < 4 and len(body) >= len(mark) and set(body) == {mark[0]}


def _split_fence(lines: list[str], tok: Token, limit: int, refs: Refs) -> list[tuple[str, str]]:
    """Split a fenced code block, closing it at the end of each part and reopening it
    with the same fence and language at the start of the next."""
    opener, mark = lines[0], tok.markup
    indent = opener[: len(opener) - len(opener.lstrip(" "))]
    closed = len(lines) > 1 and _is_closing_fence(lines[-1], mark)
    body = lines[1:-1] if closed else lines[1:]
    words = tok.info.split()
    # The raw first word, so the reopened fence parses to the same language class.
    lang = words[0] if words and len(words[0]) <= 40 else ""
    reopen, closer = indent + mark + lang, indent + mark
    head = max(utf16_len(opener), utf16_len(reopen))
    tail = max(utf16_len(closer), utf16_len(lines[-1]) if closed else 0)
    wrap = utf16_len(_render(f"{opener}\nx\n{closer}")) - 1
    slack = _TAB_SLACK if indent else 0
    room_plain, room_html = limit - head - tail - 2, limit - wrap
    if min(room_plain, room_html) < 16 or not body:
        return _split_lines(lines, limit, refs, {})

    def cost(s: str) -> tuple[int, int]:
        return utf16_len(s) + 1, utf16_len(escape_html(s)) + 1 + slack

    groups: list[list[str]] = [[]]
    used_p = used_h = 0
    for line in body:
        while True:
            cp, ch = cost(line)
            if used_p + cp <= room_plain and used_h + ch <= room_html:
                groups[-1].append(line)
                used_p, used_h = used_p + cp, used_h + ch
                break
            fits_alone = cp <= room_plain and ch <= room_html
            if groups[-1] and (fits_alone or 2 * used_p > room_plain or 2 * used_h > room_html):
                groups.append([])
                used_p = used_h = 0
                continue
            # One code line longer than a whole part: fill the room that is left.
            k, p, h = 0, used_p + 1 + slack, used_h + 1 + slack
            for c in line:
                p, h = p + utf16_len(c), h + utf16_len(escape_html(c))
                if p > room_plain or h > room_html:
                    break
                k += 1
            if k == 0 and groups[-1]:
                groups.append([])
                used_p = used_h = 0
                continue
            k = _ws_cut(line, max(k, 1))
            groups[-1].append(line[:k])
            groups.append([])
            used_p = used_h = 0
            line = line[k:]
            if not line:
                break
    groups = [g for g in groups if g]
    while len(groups) > 1 and not "".join(groups[-1]).strip():
        groups.pop()  # trailing blank code lines at a cut point carry nothing
    out: list[tuple[str, str]] = []
    for n, group in enumerate(groups):
        last = n == len(groups) - 1
        end = ([lines[-1]] if closed else []) if last else [closer]
        src = "\n".join([opener if n == 0 else reopen, *group, *end])
        html = _probe(src, limit, refs)
        if html is None:
            # The estimate is conservative, so this is an unforeseen input (say a cut
            # that looks like a fence): a plain line split is still valid, just uglier.
            return _split_lines(lines, limit, refs, {})
        out.append((src, html))
    return out


def _split(md: str, limit: int) -> list[tuple[str, str]]:
    src = _normalize(md)
    if not src.strip():
        return []
    limit = max(int(limit), _MIN_LIMIT)
    env: dict[str, Any] = {}
    tokens = _md.parse(src, env)
    refs: Refs = env.get("references", {})
    renderer = _Renderer(tokens)
    lines = src.split("\n")

    # Units: each top-level block with its exact html, and the gaps between them
    # (blank lines, reference definitions) which render to nothing.
    units: list[tuple[int, int, str, int]] = []  # first line, end line, html, token index
    cursor, i = 0, 0
    while i < len(tokens):
        t = tokens[i]
        if t.map and t.map[0] >= cursor:
            if t.map[0] > cursor:
                units.append((cursor, t.map[0], "", -1))
            units.append((t.map[0], max(t.map[1], t.map[0] + 1), renderer.block(i, False), i))
            cursor = units[-1][1]
        i = renderer.end[i] + 1
    if cursor < len(lines):
        units.append((cursor, len(lines), "", -1))

    out: list[tuple[str, str]] = []
    cur_src: list[str] = []
    cur_html: list[str] = []
    size_p = size_h = 0

    def flush() -> None:
        plain, html = _trim("\n".join(cur_src)), "\n\n".join(h for h in cur_html if h)
        if plain and html:
            out.append((plain, html))
        elif plain:  # only reference definitions and the like: show them as text
            out.extend(_split_lines(plain.split("\n"), limit, refs, {}))
        cur_src.clear()
        cur_html.clear()

    for start, stop, html, ti in units:
        text = "\n".join(lines[start:stop])
        pieces = [(text, html)]
        if not text.strip():
            if not cur_src or size_p + 1 + utf16_len(text) > limit:
                continue  # whitespace at a cut point is dropped
        elif utf16_len(text) > limit or utf16_len(html) > limit:
            tok = tokens[ti] if ti >= 0 else None
            if tok is not None and tok.type == "fence":
                pieces = _split_fence(lines[start:stop], tok, limit, refs)
            else:
                prefer = {}
                for t in tokens[ti + 1 : renderer.end[ti]] if tok is not None else ():
                    if t.map and t.nesting >= 0 and t.level == 1 and t.map[0] > start:
                        prefer[t.map[0] - start] = 2  # a list item or quoted block
                for n in range(1, stop - start):
                    if not lines[start + n - 1].strip() and not lines[start + n].startswith("    "):
                        prefer.setdefault(n, 1)  # after a blank line
                pieces = _split_lines(lines[start:stop], limit, refs, prefer)
        for n, (p_src, p_html) in enumerate(pieces):
            add_p = utf16_len(p_src) + (1 if cur_src else 0)
            add_h = utf16_len(p_html) + (2 if p_html and size_h else 0)
            # Pieces of one split block already fill a part each; joining two would only
            # close and reopen a code fence inside the same message.
            if cur_src and (n or size_p + add_p > limit or size_h + add_h > limit):
                flush()
                size_p = size_h = 0
                add_p, add_h = utf16_len(p_src), utf16_len(p_html)
            cur_src.append(p_src)
            cur_html.append(p_html)
            size_p, size_h = size_p + add_p, size_h + add_h
    flush()
    return out


def _safe_split(md: str, limit: int) -> list[tuple[str, str]]:
    try:
        return _split(md, limit)
    except Exception:  # model output is untrusted; a splitter bug must not lose the reply
        _log.exception("markdown splitting failed; sending escaped text")
        text, step = md.strip(), max(int(limit), _MIN_LIMIT) // 5  # "&amp;" is 5 units
        parts = [text[k : k + step] for k in range(0, len(text), step)]
        return [(p, escape_html(p)) for p in parts if p.strip()]


def split_markdown(md: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    return [plain for plain, _ in _safe_split(md, limit)]


def render_chunks(md: str, limit: int = TELEGRAM_LIMIT) -> list[Chunk]:
    return [Chunk(html=html, plain=plain) for plain, html in _safe_split(md, limit)]
