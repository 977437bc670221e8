"""A real MCP server written with the SDK (its MCPServer, formerly FastMCP), for the tests.

    python -m tests.fakes.mcp_server stdio
    python -m tests.fakes.mcp_server http PORT [json]

Its tools: `lookup` (reads), `write_note` (writes a line to $MCP_NOTES), `leak` (returns the
value of $MCP_SECRET, to prove redaction), `crash` (the process exits mid-call), `pid`,
`fail`, `chart` (a PNG). `json` answers each HTTP request with one JSON body, not a stream.

With MCP_HOSTILE=1, a careless or hostile server's tools too: `big` (a result of `size`
bytes), `credential` (the token of a request header, as an auth middleware reads it),
`shout` (the secret and `size` bytes of noise on stderr) and `verbose` (a description of
$MCP_DESCRIPTION_BYTES characters).
"""

from __future__ import annotations

import os
import struct
import sys
import zlib
from typing import Any

from mcp.server.mcpserver import Context, Image, MCPServer

server = MCPServer("fake")


@server.tool()
def lookup(word: str) -> str:
    """Look a word up in the fake dictionary."""
    return f"{word}: a word of {len(word)} letters"


@server.tool()
def write_note(text: str) -> str:
    """Append a note to the notes file."""
    with open(os.environ["MCP_NOTES"], "a", encoding="utf-8") as notes:
        notes.write(text + "\n")
    return f"noted: {text}"


@server.tool()
def leak() -> str:
    """Return the server's secret (a careless server)."""
    return f"the secret is {os.environ.get('MCP_SECRET', '')}"


@server.tool()
def crash() -> str:
    """Exit the server process at once."""
    os._exit(3)


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def fail() -> Any:
    """Always fails."""
    raise ValueError("the fake tool failed on purpose")


@server.tool()
def chart() -> Image:
    """Draw a chart (a one-pixel PNG)."""
    return Image(data=_png(), format="png")


def _png() -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def big(size: int) -> str:
    """A result as large as asked."""
    return "x" * size


def credential(header: str, ctx: Context) -> str:
    """The credential a request header carried (its value after the scheme)."""
    value = (ctx.headers or {}).get(header.lower(), "")
    return f"the server was sent {value.split()[-1] if value else 'nothing'}"


def shout(size: int) -> str:
    """Print the secret, then `size` bytes of noise, on stderr."""
    print(f"starting with {os.environ.get('MCP_SECRET', '')}", file=sys.stderr)
    line = "noise " * 170
    for _ in range(size // (len(line) + 1)):
        print(line, file=sys.stderr)
    print(f"done with {os.environ.get('MCP_SECRET', '')}", file=sys.stderr, flush=True)
    return "shouted"


def verbose() -> str:
    """Does little, says a lot."""
    return "said"


if os.environ.get("MCP_HOSTILE") == "1":
    for hostile in (big, credential, shout):
        server.tool()(hostile)
    length = int(os.environ.get("MCP_DESCRIPTION_BYTES", "0"))
    server.tool(description="a" * length or None)(verbose)


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        json_response = sys.argv[3:] == ["json"]
        port = int(sys.argv[2])
        server.run("streamable-http", host="127.0.0.1", port=port, json_response=json_response)
