"""The MCP servers' lifecycle: each server is one supervisor task that connects with the
official SDK, keeps the session while the server answers, and reconnects with backoff.

A server that fails or dies never stops the bot: its state and last error are kept for
`augure doctor`, `/status` and the result of a call made while it is down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from augure.common.errors import Unavailable
from augure.config.mcp import McpServerSettings, expand
from augure.host.home import PRIVATE_FOLDER
from augure.host.logs import FORMAT, LogRedactor, private_rotating_handler
from augure.host.secrets import Redactor
from augure.mcp.limits import (
    MESSAGE_LIMIT,
    OVER_LIMIT,
    PAGE_LIMIT,
    OversizedAnswer,
    bounded,
    megabytes,
)

__all__ = ["McpServer", "OversizedAnswer", "ServerDown"]

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp_types import CallToolResult
    from mcp_types import Tool as ListedTool

    from augure.mcp.stdio import StderrSink

log = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 1.0
LAST_RETRY_SECONDS = 60.0
# How often a quiet server is asked whether it still answers; a failed call asks at once.
PING_SECONDS = 10.0

Listener = Callable[["McpServer", "list[ListedTool]"], None]


class ServerDown(Unavailable):
    """The server cannot take calls now; the message says why and that it is retried."""


@dataclass
class McpServer:
    name: str
    settings: McpServerSettings
    logs: Path | None = None
    redact: Redactor = field(default_factory=lambda: Redactor({}))
    state: str = "starting"  # starting, ready, down
    error: str | None = None
    session: ClientSession | None = None
    listed: list[ListedTool] = field(default_factory=list)  # as of the last start
    exit_code: int | None = None  # of a stdio process that exited on its own, this attempt
    retry_at: float | None = None  # the event loop's time of the next attempt, while down
    _settled: asyncio.Event = field(default_factory=asyncio.Event)  # first start ended
    _trouble: asyncio.Event = field(default_factory=asyncio.Event)
    _ready: asyncio.Event = field(default_factory=asyncio.Event)

    def describe(self) -> str:
        if self.state == "ready":
            return f"ready, {len(self.listed)} tool(s)"
        if self.state == "down":
            return f"down ({self.error}); retrying"
        return "starting"

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        session = self.session
        if session is None:
            raise ServerDown(self.down_text())
        try:
            return await session.call_tool(
                tool, arguments, read_timeout_seconds=self.settings.timeout_seconds
            )
        except Exception as exc:
            if OVER_LIMIT in str(exc):  # the transport dropped the answer; the server is fine
                raise OversizedAnswer(
                    f"MCP server {self.name}: the answer of {tool} is over the "
                    f"{megabytes(MESSAGE_LIMIT)} limit for one MCP message and was dropped; "
                    "ask for less (a narrower query, a smaller page)"
                ) from None
            self.error = _short(exc)
            self._trouble.set()  # the supervisor checks at once whether the server is alive
            raise ServerDown(
                f"MCP server {self.name} failed during the call ({self.error}); "
                "it is checked and restarted if needed, try again shortly"
            ) from None

    async def wait_ready(self) -> None:
        await self._ready.wait()

    async def wait_settled(self) -> None:
        """Until the first start succeeded or failed."""
        await self._settled.wait()

    @property
    def settled(self) -> bool:
        return self._settled.is_set()

    def down_text(self) -> str:
        """Why it takes no calls, where to look, and when it is tried again."""
        if self.state == "starting":
            return f"MCP server {self.name} is still starting; try again shortly"
        log_file = ""
        if self.logs is not None and self.settings.command is not None:
            # As the owner finds it: under the home, beside the bot's own log.
            log_file = f" (see {self.logs.parent.name}/{self.logs.name}/{self.name}.log)"
        wait = self.retry_at - asyncio.get_running_loop().time() if self.retry_at else 0
        retry = f"retrying in {math.ceil(wait)} s" if wait > 0 else "retrying now"
        return (
            f"MCP server {self.name} is down: {self.error or 'no reason given'}{log_file}; {retry}"
        )

    async def supervise(self, listener: Listener) -> None:
        delay = FIRST_RETRY_SECONDS
        while True:
            self.exit_code = None
            try:
                async with contextlib.AsyncExitStack() as stack:
                    session = await self._connect(stack)
                    listed = await _list_tools(self.name, session, self.settings.timeout_seconds)
                    self.listed = listed
                    listener(self, listed)
                    self.session, self.state, self.error = session, "ready", None
                    self._ready.set()
                    self._settled.set()
                    log.info("MCP server %s ready with %d tool(s)", self.name, len(listed))
                    delay = FIRST_RETRY_SECONDS
                    await self._watch(session)
            except ImportError:
                self.error = "the MCP client is not installed: pip install 'augure[mcp]'"
            except Exception as exc:  # a server's failure is reported, never raised
                # The session only sees the connection close; the process says why.
                self.error = _exit_reason(self.exit_code) or _short(
                    exc, self.settings.timeout_seconds
                )
            finally:
                self.session = None
                self._ready.clear()
            self.state = "down"
            self._settled.set()
            log.warning("MCP server %s is down (%s); retry in %g s", self.name, self.error, delay)
            self.retry_at = asyncio.get_running_loop().time() + delay
            await asyncio.sleep(delay)
            self.retry_at = None
            delay = min(delay * 2, LAST_RETRY_SECONDS)

    async def _connect(self, stack: contextlib.AsyncExitStack) -> ClientSession:
        from mcp import ClientSession

        settings = self.settings
        streams: tuple[Any, ...]  # the two streams a session reads and writes
        if settings.command is not None:
            from augure.mcp.stdio import stdio_transport

            transport = stdio_transport(
                settings.command,
                settings.args,
                expand(settings.env),
                self._stderr(stack),
                exited=self._exited,
            )
            streams = await stack.enter_async_context(transport)
        else:
            from mcp.client.streamable_http import streamable_http_client

            from augure.mcp.http import http_client

            assert settings.url is not None
            client = http_client(expand(settings.headers))
            await stack.enter_async_context(client)
            streams = await stack.enter_async_context(
                streamable_http_client(
                    settings.url, http_client=client, max_sse_event_size=MESSAGE_LIMIT
                )
            )
        read, write = streams[0], streams[1]
        session = await stack.enter_async_context(ClientSession(read, write))
        await asyncio.wait_for(session.initialize(), settings.timeout_seconds)
        return session

    def _exited(self, code: int) -> None:
        self.exit_code = code

    def _stderr(self, stack: contextlib.AsyncExitStack) -> StderrSink | None:
        """Where a stdio server's stderr goes: its own log file, redacted and rotated as the
        bot's log is, not the bot's console (None: the console, when there is no log)."""
        if self.logs is None:
            return None
        self.logs.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
        # The server's stderr may quote what it was sent: its owner's only, like the bot's log.
        handler = private_rotating_handler(self.logs / f"{self.name}.log")
        stack.callback(handler.close)
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.addFilter(LogRedactor(self.redact))
        server = f"mcp.{self.name}.stderr"

        def write(line: str) -> None:
            record = logging.LogRecord(server, logging.INFO, "", 0, "%s", (line,), None)
            handler.handle(record)

        return write

    async def _watch(self, session: ClientSession) -> None:
        """Return once the server stops answering a ping."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._trouble.wait(), PING_SECONDS)
            self._trouble.clear()
            await asyncio.wait_for(session.send_ping(), self.settings.timeout_seconds)


async def _list_tools(server: str, session: ClientSession, timeout: float) -> list[ListedTool]:
    """Every page of the server's tools, bounded (docs/reference/mcp.md, "Limits")."""
    from mcp_types import PaginatedRequestParams

    listed: list[ListedTool] = []
    cursor: str | None = None
    for _ in range(PAGE_LIMIT):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await asyncio.wait_for(session.list_tools(params=params), timeout)
        listed, spent = bounded(server, [*listed, *page.tools])
        cursor = page.next_cursor
        if not cursor or spent:
            return listed
    log.warning("MCP server %s: tools past page %d left out", server, PAGE_LIMIT)
    return listed


def _exit_reason(code: int | None) -> str | None:
    if code is None:
        return None
    if code < 0:  # how asyncio reports a process ended by a signal
        return f"it was stopped by signal {-code}"
    return f"it exited with code {code}"


def _short(exc: BaseException, timeout: float | None = None) -> str:
    """One line about a failure; an exception group is described by its first leaf. A time
    out (of the start, the listing, a ping) says how long it waited."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError) and timeout is not None:
        return f"it did not answer within {timeout:g} s"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:200] if text else type(exc).__name__
