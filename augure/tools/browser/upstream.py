"""The guard proxy's way out: through the proxy the environment names for a destination, as the
bot's other HTTP clients do (HTTP_PROXY / HTTPS_PROXY / ALL_PROXY, minus NO_PROXY).

An http:// or https:// proxy is asked for a tunnel with CONNECT (plain http:// requests are
sent to it in absolute form); a socks5:// proxy is given the address the guard checked, a
socks5h:// proxy the name, which it then resolves itself (the usual curl meaning of the two).
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import urllib.request
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import socksio

from augure.tools.netguard import IPAddress

CONNECT_TIMEOUT = 10.0
# The proxy's answer to CONNECT, which includes its own connection to the destination.
HANDSHAKE = 30.0
SCHEMES = ("http", "https", "socks5", "socks5h")
Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


@dataclass(frozen=True)
class UpstreamProxy:
    scheme: str
    host: str
    port: int
    username: str = ""
    password: str = ""

    def __str__(self) -> str:
        # The one way a proxy is named, in logs and in answers to the browser: no credentials.
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def speaks_http(self) -> bool:
        return self.scheme in ("http", "https")

    @property
    def resolves_names(self) -> bool:
        """Whether the proxy, not the guard, picks the address a name is dialled at."""
        return self.scheme != "socks5"

    def authorization(self) -> str:
        """The `Proxy-Authorization` header line (no line end) for an HTTP proxy, or ""."""
        if not self.username and not self.password:
            return ""
        token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
        return f"Proxy-Authorization: Basic {token}"

    async def open(self) -> Streams:
        """A connection to the proxy itself."""
        secure = ssl.create_default_context() if self.scheme == "https" else None
        try:
            return await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, ssl=secure), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError) as exc:
            raise OSError(f"cannot connect to the proxy {self} ({exc or 'timed out'})") from None

    async def tunnel(self, host: str, port: int, addresses: list[IPAddress]) -> Streams:
        """A connection through the proxy to `host` (a name it resolves) or, for socks5://,
        to the first of the checked `addresses` that it can reach."""
        targets = [host] if self.resolves_names else [str(address) for address in addresses]
        error = OSError(f"the proxy {self} was given no address for {host}")
        for target in targets:
            reader, writer = await self.open()
            try:
                if self.speaks_http:
                    await asyncio.wait_for(self._connect(reader, writer, target, port), HANDSHAKE)
                else:
                    await asyncio.wait_for(self._socks(reader, writer, target, port), HANDSHAKE)
                return reader, writer
            except (OSError, TimeoutError, socksio.ProtocolError) as exc:
                writer.close()
                error = OSError(f"the proxy {self} cannot reach {target}:{port} ({exc})")
        raise error

    async def _connect(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int
    ) -> None:
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}", self.authorization()]
        writer.write("\r\n".join([line for line in lines if line] + ["", ""]).encode("latin-1"))
        head = await reader.readuntil(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 1)[-1]
        if not status.startswith("2"):
            raise OSError(f"it answered {status.strip()[:100]}")

    async def _socks(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int
    ) -> None:
        # The exchange of httpcore's SOCKS5 client, on asyncio streams.
        socks5 = socksio.socks5
        connection = socks5.SOCKS5Connection()
        method = (
            socks5.SOCKS5AuthMethod.USERNAME_PASSWORD
            if self.username or self.password
            else socks5.SOCKS5AuthMethod.NO_AUTH_REQUIRED
        )
        connection.send(socks5.SOCKS5AuthMethodsRequest([method]))
        writer.write(connection.data_to_send())
        chosen = connection.receive_data(await reader.read(4096))
        if not isinstance(chosen, socks5.SOCKS5AuthReply) or chosen.method != method:
            raise OSError("it does not accept this way of signing in")
        if method == socks5.SOCKS5AuthMethod.USERNAME_PASSWORD:
            connection.send(
                socks5.SOCKS5UsernamePasswordRequest(self.username.encode(), self.password.encode())
            )
            writer.write(connection.data_to_send())
            signed_in = connection.receive_data(await reader.read(4096))
            if (
                not isinstance(signed_in, socks5.SOCKS5UsernamePasswordReply)
                or not signed_in.success
            ):
                raise OSError("it refused the user name and password")
        connection.send(
            socks5.SOCKS5CommandRequest.from_address(socks5.SOCKS5Command.CONNECT, (host, port))
        )
        writer.write(connection.data_to_send())
        reply = connection.receive_data(await reader.read(4096))
        if not isinstance(reply, socks5.SOCKS5Reply):
            raise OSError("it gave no answer to CONNECT")
        if reply.reply_code != socks5.SOCKS5ReplyCode.SUCCEEDED:
            raise OSError(f"it answered {reply.reply_code.name.lower().replace('_', ' ')}")


def proxy_for(scheme: str, host: str) -> UpstreamProxy | None:
    """The proxy the environment names for a `scheme` ("http" or "https") request to `host`,
    or None to go direct. Read at each connection, so a changed environment applies at once."""
    proxies = urllib.request.getproxies_environment()
    url = proxies.get(scheme) or proxies.get("all")
    # The stdlib's reading of NO_PROXY (names, domain suffixes, "*"), as curl reads it.
    if not url or urllib.request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]
        return None
    return parse_proxy(url)


def parse_proxy(url: str) -> UpstreamProxy:
    # Like httpx, a bare "host:port" is an HTTP proxy.
    parts = urlsplit(url if "://" in url else f"http://{url}")
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or not parts.hostname:
        # Only the scheme and host are repeated: the URL may hold a password.
        raise OSError(
            f"the proxy variable names a {scheme}:// proxy at {parts.hostname or '?'}; "
            "the browser can use http://, https://, socks5:// or socks5h:// ones"
        )
    try:
        port = parts.port or (443 if scheme == "https" else 1080 if "socks" in scheme else 80)
    except ValueError:
        raise OSError(f"the proxy variable has a bad port for {parts.hostname}") from None
    return UpstreamProxy(
        scheme,
        parts.hostname,
        port,
        unquote(parts.username or ""),
        unquote(parts.password or ""),
    )
