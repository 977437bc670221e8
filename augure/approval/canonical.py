"""Canonical spellings of the things rules name: hosts and paths
(docs/reference/approvals.md#rules).

A rule is matched against one spelling of a target, so every other way of writing the same
resource must come out identical here, or a deny is beaten by `/a/../denied`, `//denied`,
`%2e%2e`, `HOST.`, `identity.md/` or `[::ffff:7f00:1]`. Normalising more than a server would
is the safe direction: it can only make a deny match more, and an allow ask more.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import unquote

# At most this many rounds of percent-decoding: `%25252e` is three; a server decodes once,
# a proxy in front of it may decode again.
MAX_DECODE_ROUNDS = 8
_IPV4_LIKE = re.compile(r"^[0-9a-fA-FxX.]+$")


def host(name: str) -> str:
    """Lower case, no trailing dot, IP literals in one form (IPv4 inside IPv6 as dotted quad,
    `127.1` / `0x7f.0.0.1` / `2130706433` as `127.0.0.1`), IPv6 in brackets."""
    text = _decode(name).strip().lower().rstrip(".")
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if ":" in bare:
        try:
            address = ipaddress.IPv6Address(bare.split("%", 1)[0])
        except ValueError:
            return text
        embedded = embedded_ipv4(address)
        return str(embedded) if embedded is not None else f"[{address.compressed}]"
    if _IPV4_LIKE.match(bare):
        try:
            # The BSD parser browsers and libc resolvers share: fewer parts, hex, octal.
            return socket.inet_ntoa(socket.inet_aton(bare))
        except OSError:
            return bare
    return bare


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries: mapped, compatible, 6to4, NAT64, Teredo client."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    packed = int(address)
    for prefix in (_NAT64, _NAT64_LOCAL):
        if address in prefix:
            return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    if packed >> 32 == 0 and packed > 1:  # `::a.b.c.d`, the deprecated compatible form
        return ipaddress.IPv4Address(packed)
    return None


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")


def path(raw: str, *, decode: bool = True) -> str:
    """`/a/b` with `.`, `..`, repeated and trailing `/`, trailing dots of a segment and
    (when `decode`) percent-encoding resolved; backslashes count as slashes, as in browsers.
    Never climbs above the root. Always starts with `/`; `/` alone for the root."""
    text = _decode(raw) if decode else raw
    text = text.replace("\\", "/")
    parts: list[str] = []
    for segment in text.split("/"):
        segment = segment.rstrip(".") if segment.strip(".") else segment
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts:
                parts.pop()
            continue
        parts.append(segment)
    return "/" + "/".join(parts)


def _decode(text: str) -> str:
    for _ in range(MAX_DECODE_ROUNDS):
        decoded = unquote(text) if "%" in text else text
        if decoded == text:
            break
        text = decoded
    return text
