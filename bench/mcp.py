"""Schema tokens per request with an MCP server: sent with every request, deferred (one line
per tool in the system prompt), and deferred after `load_tools` loaded one of its tools.

The server is the tests' real SDK server over stdio, started by the same manager as the bot:

    python -m bench.mcp
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from augure.agent.context import first_sentence
from augure.config.settings import load_config
from augure.core.toolset import build_registry
from augure.mcp.adapter import register
from augure.mcp.manager import McpManager
from augure.tools.registry import ToolRegistry

ROOT = Path(__file__).parents[1]


Figures = tuple[int, int]


def tokens(registry: ToolRegistry, loaded: list[str]) -> Figures:
    """Chars/4 of the tool schemas, and of the deferred listing in the system prompt."""
    schemas = registry.to_function_schemas(loaded)
    listing = "\n".join(
        f"- {t.name}: {first_sentence(t.description)}"
        for t in registry.deferred()
        if t.name not in loaded
    )
    return len(json.dumps(schemas)) // 4, len(listing) // 4


async def measure(deferred: bool, home: Path) -> tuple[Figures, Figures, Figures]:
    """Tokens with no MCP server, with the server ready, and after loading one of its tools."""
    table = {
        "command": sys.executable,
        "args": ["-m", "tests.fakes.mcp_server", "stdio"],
        "env": {"MCP_NOTES": str(home / "notes.txt"), "PYTHONPATH": str(ROOT)},
        "deferred": deferred,
    }
    (home / "augure.toml").write_text(
        "[mcp.servers.fake]\n" + "\n".join(f"{k} = {_toml(v)}" for k, v in table.items()),
        encoding="utf-8",
    )
    config = load_config(home=home)
    registry = build_registry(config)
    without = tokens(registry, [])
    manager = McpManager(config.mcp)
    manager.start(lambda server, listed: register(registry, config, server, listed))
    try:
        await asyncio.wait_for(manager.servers["fake"].wait_ready(), 60)
        return without, tokens(registry, []), tokens(registry, ["mcp__fake__lookup"])
    finally:
        await manager.close()


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


async def main() -> None:
    print("tokens per request (chars/4): tool schemas + deferred listing, built-in tools plus")
    print("one MCP server of 7 tools (after load_tools: one of them loaded)")
    print(f"{'server':>10} {'no server':>14} {'server ready':>14} {'after load_tools':>17}")
    for deferred in (False, True):
        with tempfile.TemporaryDirectory() as folder:
            figures = await measure(deferred, Path(folder))
        cells = [f"{schemas} + {listing}" for schemas, listing in figures]
        label = "deferred" if deferred else "eager"
        print(f"{label:>10} {cells[0]:>14} {cells[1]:>14} {cells[2]:>17}")


if __name__ == "__main__":
    asyncio.run(main())
