"""SSRF guard: outward requests may not reach this machine, its network or cloud metadata.

Every host is resolved and *every* address it resolves to is checked (a name with one public
and one private address is refused). Callers check each redirect hop too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from augure.approval.canonical import embedded_ipv4
from augure.common.errors import NotDone

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata endpoints that are not covered by the private/link-local ranges.
METADATA = {
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("fd00:ec2::254"),
    ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
}


class BlockedURL(NotDone):
    """The URL may not be fetched; the message says why, fit for the model."""


def classify(address: IPAddress) -> str | None:
    """Why an address is refused, or None if it is a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        # Mapped, compatible, 6to4, NAT64 and Teredo forms reach the IPv4 address they carry.
        embedded = embedded_ipv4(address)
        if embedded is not None:
            reason = classify(embedded)
            if reason is not None:
                return reason
            if address.ipv4_mapped is not None:
                return None  # the public IPv4 address itself, in IPv6 clothing
    if address in METADATA:
        return "a cloud metadata address"
    for reason, flag in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
    ):
        if flag:
            return reason
    if isinstance(address, ipaddress.IPv4Address) and address in ipaddress.ip_network(
        "100.64.0.0/10"
    ):
        return "carrier-grade NAT (private)"
    return None


async def resolve(host: str, port: int) -> list[IPAddress]:
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise BlockedURL(f"cannot resolve host {host!r} ({exc.strerror})") from None
    return [ipaddress.ip_address(info[4][0]) for info in infos]


@dataclass(frozen=True)
class Pinned:
    """A URL that passed the check, and the checked address to connect to.

    Connecting to `address` (not to a fresh lookup of the name) is what defeats DNS
    rebinding: a name that answers a public address to the check and a private one to the
    connection. `address` is None when private networks are allowed (nothing to pin).
    """

    url: str
    address: str | None


async def check_url(url: str, *, allow_private: bool = False) -> str:
    """Refuse a URL that is not http(s) or that resolves to a non-public address.

    Returns the URL unchanged so callers can write `await check_url(u)` inline.
    """
    return (await pin_url(url, allow_private=allow_private)).url


async def pin_url(url: str, *, allow_private: bool = False) -> Pinned:
    """As `check_url`, and say which of the checked addresses to connect to."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise BlockedURL(f"only http and https URLs are allowed, not {parts.scheme or 'none'!r}")
    if not parts.hostname:
        raise BlockedURL(f"URL {url!r} has no host")
    if parts.username or parts.password:
        raise BlockedURL("URLs with credentials in them are not allowed")
    if allow_private:
        return Pinned(url, None)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    addresses = await resolve(parts.hostname, port)
    for address in addresses:
        reason = classify(address)
        if reason:
            raise BlockedURL(
                f"{parts.hostname} resolves to {address}, which is {reason}; requests to "
                "private networks are refused (tools.http.allow_private_networks)"
            )
    if not addresses:
        raise BlockedURL(f"cannot resolve host {parts.hostname!r}")
    return Pinned(url, str(addresses[0]))
