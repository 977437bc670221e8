"""`augure mcp list [--json]`: each configured MCP server, its state and its tools.

The command starts each enabled server as the bot would (concurrently), waits for every one
to be ready or to fail, prints, and stops them all."""

from __future__ import annotations

import argparse
import json

from augure.config.settings import Config
from augure.mcp.survey import survey


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser("mcp", help="MCP servers (default: list)")
    actions = mcp.add_subparsers(dest="action")
    listing = actions.add_parser("list", help="servers, their state and their tools")
    listing.add_argument("--json", action="store_true", help="machine-readable output")


async def mcp(config: Config, args: argparse.Namespace) -> int:
    servers = await survey(config)
    if getattr(args, "json", False):
        print(json.dumps(servers, indent=2))
        return 0
    if not servers:
        print("No MCP servers configured ([mcp.servers.NAME] in augure.toml).")
        return 0
    for server in servers:
        error = f" ({server['error']})" if server["error"] else ""
        deferred = ", deferred" if server["deferred"] else ""
        print(f"{server['name']}: {server['state']}{error}, {server['transport']}{deferred}")
        for tool in server["tools"]:
            print(f"  {tool['name']} [{tool['access']}]: {tool['description']}")
    return 0
