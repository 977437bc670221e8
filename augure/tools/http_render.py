"""How an `http` response reads for the model: status line, main headers, body as text (an
HTML page as its readable text unless the call asked for the raw markup)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from augure.tools.readable import is_html, readable

# Said once, after the page: the model can ask again for what the readable text leaves out.
PAGE_NOTE = "\n\n[the page's readable text; `raw: true` returns its HTML]"
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


def render(response: Response, method: str, max_bytes: int, raw: bool = False) -> str:
    lines = [f"HTTP {response.status} {response.reason}".rstrip()]
    if len(response.hops) > 1:
        lines.append("redirected: " + " -> ".join(response.hops))
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    if response.status in (301, 302, 303, 307, 308) and method != "GET":
        lines.append(f"(redirects are followed for GET only; {method} was not repeated)")
    text = _body_text(response)
    if text and not raw and is_html(response.headers.get("content-type", ""), response.body):
        text = readable(text, response.hops[-1]) + PAGE_NOTE
    if text:
        lines += ["", text]
    if response.cut:
        lines.append(f"[response cut at {max_bytes} bytes]")
    return "\n".join(lines)


def _body_text(response: Response) -> str:
    kind = response.headers.get("content-type", "").lower()
    charset = "utf-8"
    if "charset=" in kind:
        charset = kind.split("charset=", 1)[1].split(";")[0].strip().strip('"') or "utf-8"
    if "json" in kind and not response.cut:
        try:
            return json.dumps(json.loads(response.body), indent=1, ensure_ascii=False)
        except (ValueError, UnicodeDecodeError):
            pass
    textual = kind.startswith("text/") or any(t in kind for t in TEXT_TYPES)
    try:
        text = response.body.decode(charset, errors="replace" if textual else "strict")
    except (UnicodeDecodeError, LookupError):
        text = response.body.decode("utf-8", errors="replace") if textual else ""
    if not textual and ((not text and response.body) or "\x00" in text):
        return f"[binary body: {len(response.body)} bytes of {kind or 'unknown type'}, not shown]"
    return text
