"""How an `http` response reads for the model: status line, main headers, body as text (an
HTML page as its readable text unless the call asked for the raw markup, made in a child
process within what is left of the call's timeout: augure/tools/page_text.py)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from augure.tools.page_text import PageUnread, page_text
from augure.tools.readable import is_html

# Said once, after the page: the model can ask again for what the readable text leaves out.
RAW = "`raw: true` returns its HTML"
PAGE_NOTE = f"\n\n[the page's readable text; {RAW}]"
TEXT_TYPES = ("json", "xml", "javascript", "x-www-form-urlencoded", "yaml", "csv")


@dataclass
class Response:
    """What `send` brought back: the last hop's answer and every URL it passed through."""

    status: int
    reason: str
    headers: dict[str, str]
    body: bytes
    cut: bool
    hops: list[str]


@dataclass(frozen=True)
class Rendered:
    text: str
    read: bool  # False: an HTML page whose readable text went over a budget, not shown


async def render(
    response: Response, method: str, max_bytes: int, seconds: float, raw: bool = False
) -> Rendered:
    """The response as the model reads it; `seconds` is what is left of the call's timeout,
    the most the page's readable text may take."""
    lines = [f"HTTP {response.status} {response.reason}".rstrip()]
    if len(response.hops) > 1:
        lines.append("redirected: " + " -> ".join(response.hops))
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    if response.status in (301, 302, 303, 307, 308) and method != "GET":
        lines.append(f"(redirects are followed for GET only; {method} was not repeated)")
    started = asyncio.get_running_loop().time()
    # Decoding and indenting a large JSON body takes a while: off the event loop.
    text = await asyncio.to_thread(_body_text, response)
    read = True
    if text and not raw and is_html(response.headers.get("content-type", ""), response.body):
        left = seconds - (asyncio.get_running_loop().time() - started)
        try:
            page, _ = await page_text(text, response.hops[-1], left, 2 * max_bytes)
            text = page + PAGE_NOTE
        except PageUnread as exc:
            text, read = f"[the page's readable text was not made: {exc}; stopped. {RAW}]", False
    if text:
        lines += ["", text]
    if response.cut:
        lines.append(f"[response cut at {max_bytes} bytes]")
    return Rendered("\n".join(lines), read)


def _body_text(response: Response) -> str:
    kind = response.headers.get("content-type", "").lower()
    charset = "utf-8"
    if "charset=" in kind:
        charset = kind.split("charset=", 1)[1].split(";")[0].strip().strip('"') or "utf-8"
    if "json" in kind and not response.cut:
        try:
            return json.dumps(json.loads(response.body), indent=1, ensure_ascii=False)
        except (ValueError, UnicodeDecodeError, RecursionError):
            pass  # shown as the text it is; JSON nested past Python's stack included
    textual = kind.startswith("text/") or any(t in kind for t in TEXT_TYPES)
    try:
        text = response.body.decode(charset, errors="replace" if textual else "strict")
    except (UnicodeDecodeError, LookupError):
        text = response.body.decode("utf-8", errors="replace") if textual else ""
    if not textual and ((not text and response.body) or "\x00" in text):
        return f"[binary body: {len(response.body)} bytes of {kind or 'unknown type'}, not shown]"
    return text
