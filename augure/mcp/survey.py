"""Every configured MCP server started once and listed: for `augure mcp list` and the doctor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from augure.host.secrets import Redactor
from augure.mcp.adapter import tool_name
from augure.mcp.manager import McpManager

if TYPE_CHECKING:
    from augure.config.settings import Config

# A server that has neither started nor failed by then is listed as still starting.
SETTLE_SECONDS = 30.0


async def survey(config: Config, timeout: float = SETTLE_SECONDS) -> list[dict[str, Any]]:
    """Every configured server as data: name, transport, state, error and tools."""
    redact = Redactor.from_config(config)
    manager = McpManager(config.mcp, config.home / "logs" / "mcp", redact)
    manager.start(lambda server, listed: None)
    try:
        await manager.settled(timeout)
        found = []
        for name, settings in config.mcp.servers.items():
            server = manager.servers.get(name)
            tools = [
                {
                    "name": tool_name(name, tool.name),
                    "access": "read_only" if tool.name in settings.read_only_tools else "write",
                    "description": tool.description or "",
                }
                for tool in (server.listed if server else [])
            ]
            found.append(
                {
                    "name": name,
                    "transport": settings.transport,
                    "state": server.state if server else "disabled",
                    # A server's error may quote a secret (a URL's token, a header).
                    "error": redact(server.error) if server and server.error else None,
                    "deferred": settings.deferred,
                    "tools": tools,
                }
            )
        return found
    finally:
        await manager.close()
