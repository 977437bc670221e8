"""Links as the egress check compares them: a result offers the links written in it, whole
(an `href` made absolute, a bare URL, a search result's URL); a call sends a link when a text
it sends out is one, with or without its scheme (`www.example.com/x`). Two spellings are
the same link when they reach the same place with the same words: scheme (http or https),
letter case of the host, a default port and an empty path do not matter; every other
character does (docs/security.md, "No leak after outside content")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

# A link written in a text: from its scheme (or `www.`) to the next space or quote.
_WRITTEN = re.compile(r"""(?i)(?<![\w@.-])(?:https?://|www\.)[^\s<>"'`\\]+""")
_START = re.compile(r"(?i)(?<![\w@.-])(?:https?://|www\.)")
# A text that is a place with no scheme: a host (a name with a top-level domain, or four
# numbers), maybe a port, then maybe a path, a query or a fragment.
_SCHEMELESS = re.compile(
    r"(?i)(?:(?:[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?\.)+[a-z][a-z0-9-]{1,62}"
    r"|\d{1,3}(?:\.\d{1,3}){3})(?::\d{1,5})?(?:[/?#]\S*)?"
)
# A host as a text names it: a dotted word, whole.
# A link urlsplit would take apart the plain way: scheme, a host of name characters, maybe a
# port, then the rest as written.
_SIMPLE = re.compile(r"(?i)(https?)://([a-z0-9.-]+)(?::(\d{1,5}))?([/?#][^\s]*)?")
_BRACKETS = re.compile(r"[()\[\]{}]")
_HOST = re.compile(r"(?i)(?<![\w.-])[a-z0-9-]+(?:\.[a-z0-9-]+)+(?![\w-])")
_TRAILING = ".,;:!?'\"*_"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def link(text: str) -> str | None:
    """The text as a link in its compared form (`host[:port]/path?query#fragment`), or None
    when it is not one (a word, a `data:` address, any other scheme)."""
    text = text.strip()
    simple = _SIMPLE.fullmatch(text)
    if simple is not None:  # most links: no credentials, no IPv6, a plain port
        scheme, place, port, rest = simple.groups()
        host = place.lower().rstrip(".")
        if not host or (port is not None and int(port) > 65535):
            return None
        if port is not None and int(port) != _DEFAULT_PORTS[scheme.lower()]:
            host += f":{int(port)}"
        rest = rest or "/"
        return host + ("/" + rest if rest[0] in "?#" else rest)
    if not re.match(r"(?i)https?://", text):
        if not _SCHEMELESS.fullmatch(text):
            return None
        return link("http://" + text)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return None
    if parts.username is not None or parts.password is not None:
        return text.split("://", 1)[1]  # `user:pass@host` carries words: compared as written
    shown_port = f":{port}" if port is not None and port != _DEFAULT_PORTS[parts.scheme] else ""
    place = f"{host}{shown_port}{parts.path or '/'}"
    if parts.query:
        place += "?" + parts.query
    return place + (f"#{parts.fragment}" if parts.fragment else "")


def host(compared: str) -> str:
    """The host of a link in its compared form."""
    place = re.split(r"[/?#]", compared, maxsplit=1)[0]
    place = place.rsplit("@", 1)[-1]
    return place if place.endswith("]") else place.rsplit(":", 1)[0]


def written_in(text: str) -> Iterator[str]:
    """Every link a text offers, in its compared form."""
    at = 0
    while (start := _START.search(text, at)) is not None:
        found = _WRITTEN.match(text, start.start())
        token = _balanced(found.group()) if found else start.group()
        at = start.start() + max(len(token), len(start.group()))
        compared = link(_trimmed(token))
        if compared is not None:
            yield compared


def said_in(text: str) -> set[str]:
    """The links a person's words give: those written in full, and each word that is a
    place without its scheme (`example.com/docs`), as the owner types them."""
    found = set(written_in(text))
    for word in text.split():
        word = _trimmed(_balanced(word.lstrip("(<[\"'")))
        if "." in word and _SCHEMELESS.fullmatch(word):
            compared = link(word)
            if compared is not None:
                found.add(compared)
    return found


def _balanced(token: str) -> str:
    """The token up to a closing bracket it did not open: Markdown's `[text](url)[next]`
    ends the link at its `)`, while `/wiki/Foo_(bar)` keeps its own."""
    if "(" not in token:  # the usual case: up to the first bracket, if any
        found = _BRACKETS.search(token)
        return token if found is None else token[: found.start()]
    depth = 0
    for index, char in enumerate(token):
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return token[:index]
            depth -= 1
        elif char in "[]{}":
            return token[:index]
    return token


def _trimmed(token: str) -> str:
    """A token without what ends the sentence around it (a full stop, a comma)."""
    return token.rstrip(_TRAILING)


def hosts_named_in(text: str) -> set[str]:
    """The hosts a text names, as dotted words (`example.com`, `10.0.0.1`), lower-cased."""
    return {found.lower() for found in _HOST.findall(text)}


def without_login(url: str) -> str:
    """An address the owner configured, as a message names it: without any user or password
    written into it, and without its query or fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))
