"""Every configured MCP server, started in the background and stopped with the bot. Without
an enabled server the client (augure.mcp.client) and the SDK are never loaded
(docs/performance.md)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from augure.config.mcp import McpSettings
from augure.host.secrets import Redactor

if TYPE_CHECKING:
    from augure.mcp.client import Listener, McpServer


class McpManager:
    """Every enabled server, started concurrently in the background; `close` stops them all."""

    def __init__(
        self, settings: McpSettings, logs: Path | None = None, redact: Redactor | None = None
    ) -> None:
        """`redact` masks the servers' stderr in their logs; without it, only what the
        servers are handed is."""
        redact = redact if redact is not None else Redactor.from_mcp(settings)
        enabled = {name: server for name, server in settings.servers.items() if server.enabled}
        self.servers: dict[str, McpServer] = {}
        if enabled:
            # The client loads only when a server is configured (docs/performance.md).
            from augure.mcp.client import McpServer

            self.servers = {
                name: McpServer(name, server, logs, redact) for name, server in enabled.items()
            }
        self.disabled = [name for name, server in settings.servers.items() if not server.enabled]
        self.startup_timeout = settings.startup_timeout_seconds
        self._started_at: float | None = None
        self._tasks: list[asyncio.Task[None]] = []

    def start(self, listener: Listener) -> None:
        self._started_at = asyncio.get_running_loop().time()
        for server in self.servers.values():
            task = asyncio.create_task(server.supervise(listener), name=f"mcp:{server.name}")
            self._tasks.append(task)

    async def settled(self, timeout: float) -> None:
        """Until every server has started or failed once (at most `timeout` seconds)."""
        waits = [s.wait_settled() for s in self.servers.values()]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*waits), timeout)

    async def started(self) -> None:
        """Until every server's first start has ended, but never past `startup_timeout_seconds`
        after `start`: a turn that begins while a server starts gets its tools, and a server
        that fails fast or hangs costs the first turns that timeout at most
        (docs/reference/mcp.md)."""
        if self._started_at is None or all(s.settled for s in self.servers.values()):
            return
        elapsed = asyncio.get_running_loop().time() - self._started_at
        if elapsed < self.startup_timeout:
            await self.settled(self.startup_timeout - elapsed)

    def absent(self, tool: str) -> str | None:
        """Why `tool` (`mcp__SERVER__TOOL`) cannot be called when SERVER is configured but not
        ready: disabled, still starting, or down and why. None for a name of no configured
        server, or of a ready one (that tool does not exist)."""
        prefix, _, rest = tool.partition("__")
        name, separator, _ = rest.partition("__")
        if prefix != "mcp" or not separator:
            return None
        if name in self.disabled:
            return f"MCP server {name} is disabled (enabled = false in augure.toml)"
        server = self.servers.get(name)
        if server is None or server.state == "ready":
            return None
        return server.down_text()

    def status_line(self) -> str | None:
        if not self.servers:
            return None
        return "MCP: " + "; ".join(f"{s.name} {s.describe()}" for s in self.servers.values())

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        # Each task leaves its exit stack, which ends the session and stops the process.
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
