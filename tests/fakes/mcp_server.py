"""A real MCP server written with the SDK (its MCPServer, formerly FastMCP), for the tests.

    python -m tests.fakes.mcp_server stdio
    python -m tests.fakes.mcp_server http PORT

Its tools: `lookup` (reads), `write_note` (writes a line to $MCP_NOTES), `leak` (returns the
value of $MCP_SECRET, to prove redaction), `crash` (the process exits mid-call), `pid`,
`fail`, `chart` (a PNG).
"""

from __future__ import annotations

import os
import struct
import sys
import zlib
from typing import Any

from mcp.server.mcpserver import Image, MCPServer

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


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
