"""SSRF guard: outward requests may not reach this machine, its network or cloud metadata.

Every host is resolved and *every* address it resolves to is checked (a name with one public
and one private address is refused). Callers check each redirect hop too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata endpoints that are not covered by the private/link-local ranges.
METADATA = {
    ipaddress.ip_address("169.254.169.254"),
    ipaddress.ip_address("fd00:ec2::254"),
    ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
}


class BlockedURL(ValueError):
    """The URL may not be fetched; the message says why, fit for the model."""


def classify(address: IPAddress) -> str | None:
    """Why an address is refused, or None if it is a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
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


async def check_url(url: str, *, allow_private: bool = False) -> str:
    """Refuse a URL that is not http(s) or that resolves to a non-public address.

    Returns the URL unchanged so callers can write `await check_url(u)` inline.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise BlockedURL(f"only http and https URLs are allowed, not {parts.scheme or 'none'!r}")
    if not parts.hostname:
        raise BlockedURL(f"URL {url!r} has no host")
    if parts.username or parts.password:
        raise BlockedURL("URLs with credentials in them are not allowed")
    if allow_private:
        return url
    port = parts.port or (443 if parts.scheme == "https" else 80)
    for address in await resolve(parts.hostname, port):
        reason = classify(address)
        if reason:
            raise BlockedURL(
                f"{parts.hostname} resolves to {address}, which is {reason}; requests to "
                "private networks are refused (tools.http.allow_private_networks)"
            )
    return url
