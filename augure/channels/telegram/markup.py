"""Telegram HTML from markdown-it tokens: each token mapped onto the few tags Telegram
accepts, every text escaped, links only with safe schemes."""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token

_SAFE_SCHEMES = ("http://", "https://", "tg://", "mailto:")
_INLINE_TAGS = {"strong": "b", "em": "i", "s": "s"}
# Set while an answer that drew on outside content is rendered: each link shows its address
# as text, so the owner sees where it leads (docs/security.md, "The reply is a way out").
# A context variable rather than a parameter: every part is measured and rendered many times
# on the way to a split, through functions that need not know.
SHOW_ADDRESSES: ContextVar[bool] = ContextVar("show_addresses", default=False)


def escape_html(s: str, *, quote: bool = False) -> str:
    """Escape text for Telegram HTML; `quote` also escapes `"` for attribute values."""
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace('"', "&quot;") if quote else s


def _safe_href(url: str) -> bool:
    return url.lower().startswith(_SAFE_SCHEMES)


def _plain_inline(children: Sequence[Token] | None) -> str:
    def text(c: Token) -> str:
        return " " if c.type.endswith("break") else c.content

    return "".join(
        _plain_inline(c.children) if c.type == "image" else text(c) for c in children or ()
    )


class Renderer:
    """Maps a token list onto Telegram HTML; `end[i]` is where the block opened at i closes."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.addresses = SHOW_ADDRESSES.get()
        self.end = list(range(len(tokens)))  # index of each opening token's close
        stack: list[int] = []
        for i, t in enumerate(tokens):
            if t.nesting == 1:
                stack.append(i)
            elif t.nesting == -1 and stack:
                self.end[stack.pop()] = i

    def blocks(self, start: int, stop: int, quoted: bool) -> list[str]:
        out, i = [], start
        while i < stop:
            if html := self.block(i, quoted):
                out.append(html)
            i = self.end[i] + 1
        return out

    def block(self, i: int, quoted: bool) -> str:
        t, end, kind = self.tokens[i], self.end[i], self.tokens[i].type
        if kind in ("paragraph_open", "heading_open"):
            inline = self.tokens[i + 1] if i + 1 < end else t
            html = self.inline(inline) if inline.type == "inline" else ""
            html = f"<b>{html}</b>" if kind == "heading_open" and html.strip() else html
        elif kind == "blockquote_open":
            # Telegram rejects nested blockquotes, so inner quotes merge into the outer one.
            html = "\n\n".join(self.blocks(i + 1, end, True))
            html = html if quoted or not html else f"<blockquote>{html}</blockquote>"
        elif kind in ("bullet_list_open", "ordered_list_open"):
            html = self.list(i, quoted)
        elif kind in ("fence", "code_block"):
            html = self.code(t)
        elif kind == "table_open":
            html = self.table(i)
        elif kind == "hr":
            html = "———"
        else:  # html_block and anything unforeseen: shown as text, never passed through
            html = escape_html(t.content)
        return html.strip()

    def list(self, i: int, quoted: bool) -> str:
        t, end = self.tokens[i], self.end[i]
        start = t.attrGet("start")
        n = start if isinstance(start, int) else 1
        # markdown-it hides the paragraphs of a tight list; a loose one keeps blank lines.
        tight = all(
            p.hidden
            for p in self.tokens[i:end]
            if p.type == "paragraph_open" and p.level == t.level + 2
        )
        sep, items, j = ("\n" if tight else "\n\n"), [], i + 1
        while j < end:
            if self.tokens[j].type == "list_item_open":
                marker = f"{n}. " if t.type == "ordered_list_open" else "• "
                lines = sep.join(self.blocks(j + 1, self.end[j], quoted)).split("\n")
                rest = "".join(f"\n{' ' * len(marker)}{ln}" if ln else "\n" for ln in lines[1:])
                items.append((marker + lines[0] + rest).rstrip())
                n += 1
            j = self.end[j] + 1
        return sep.join(items)

    def code(self, t: Token) -> str:
        text = t.content.rstrip("\n")
        from markdown_it.common.utils import unescapeAll

        info = unescapeAll(t.info).split() if t.type == "fence" else []
        if not text.strip():
            return ""
        if not info:
            return f"<pre>{escape_html(text)}</pre>"
        lang = escape_html(info[0], quote=True)
        return f'<pre><code class="language-{lang}">{escape_html(text)}</code></pre>'

    def table(self, i: int) -> str:
        rows: list[list[str]] = []
        aligns: list[str] = []
        for j in range(i, self.end[i]):
            t, nxt = self.tokens[j], self.tokens[j + 1]
            if t.type == "tr_open":
                rows.append([])
            elif t.type in ("th_open", "td_open") and rows:
                if len(rows) == 1:
                    aligns.append(str(t.attrGet("style") or "").rpartition(":")[2])
                rows[-1].append(_plain_inline(nxt.children).strip() if nxt.type == "inline" else "")
        if not rows or not aligns:
            return ""
        rows = [(r + [""] * len(aligns))[: len(aligns)] for r in rows]
        widths = [max(len(r[c]) for r in rows) for c in range(len(aligns))]
        just = {"right": str.rjust, "center": str.center}

        def fmt(row: list[str]) -> str:
            cells = (
                just.get(a, str.ljust)(v, w) for v, w, a in zip(row, widths, aligns, strict=True)
            )
            return " | ".join(cells).rstrip()

        lines = [fmt(rows[0]), "-+-".join("-" * w for w in widths), *map(fmt, rows[1:])]
        return f"<pre>{escape_html(chr(10).join(lines))}</pre>"

    def inline(self, tok: Token) -> str:
        out: list[str] = []
        links: list[str | None] = []  # escaped href of each open link, None if dropped
        starts: list[int] = []  # where each open link's text begins in `out`
        for c in tok.children or ():
            ty, opened = c.type, out[-1] if out else ""
            if ty in ("softbreak", "hardbreak"):
                out.append("\n")  # chat text keeps the model's line breaks
            elif ty == "code_inline":
                out.append(f"<code>{escape_html(c.content)}</code>" if c.content else "")
            elif ty.endswith("_open") and ty[:-5] in _INLINE_TAGS:
                out.append(f"<{_INLINE_TAGS[ty[:-5]]}>")
            elif ty.endswith("_close") and ty[:-6] in _INLINE_TAGS:
                tag = _INLINE_TAGS[ty[:-6]]
                if opened == f"<{tag}>":
                    out.pop()  # an element left empty (`**![](x)**`) is not sent as `<b></b>`
                else:
                    out.append(f"</{tag}>")
            elif ty == "link_open":
                href = str(c.attrGet("href") or "")
                ok = _safe_href(href) and not any(links)
                links.append(escape_html(href, quote=True) if ok else None)
                starts.append(len(out))
                out.append(f'<a href="{links[-1]}">' if ok and not self.addresses else "")
            elif ty == "link_close":
                start = starts.pop() if starts else len(out)
                href_esc = links.pop() if links else None
                if href_esc is not None and self.addresses:
                    said = "".join(out[start:])
                    out.append("" if said == href_esc else f" ({href_esc})" if said else href_esc)
                elif href_esc is not None:
                    # `[](url)`: show the address rather than an empty link.
                    out.append(href_esc + "</a>" if opened.startswith("<a ") else "</a>")
            elif ty == "image":
                alt, src = escape_html(_plain_inline(c.children)), str(c.attrGet("src") or "")
                if _safe_href(src) and not any(links):
                    src = escape_html(src, quote=True)
                    shown = f"{alt} ({src})" if alt else src
                    alt = shown if self.addresses else f'<a href="{src}">{alt or src}</a>'
                out.append(alt)
            else:  # text, text_special, html_inline, ...: all plain text
                out.append(escape_html(c.content))
            if out and not out[-1]:
                out.pop()  # keep out[-1] meaningful for the empty-element checks
        return "".join(out)
