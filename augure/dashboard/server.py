"""The dashboard's server, inside the bot's process (`augure run` with `[dashboard] enabled`)
or in `augure dashboard`'s own (see docs/reference/dashboard.md).

It is one more approver of the gate: it has nothing to push (its approvals page lists what is
pending) and nothing to conclude, but being listed means a request stays open for it even when
Telegram could not show it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import secrets
import socket
from typing import TYPE_CHECKING, Any

from augure.common.errors import UsageError
from augure.common.ports import ApprovalRequest, Decide, Verdict
from augure.config.dashboard import DashboardConfig

if TYPE_CHECKING:
    from augure.core.door.doors import ReadingDoor

log = logging.getLogger(__name__)

EXTRA = "pip install 'augure[dashboard]'"


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(settings: DashboardConfig, host: str) -> None:
    if not loopback(host) and not settings.allow_remote:
        raise UsageError(
            f"the dashboard binds only a loopback address, not {host!r}; "
            "set [dashboard] allow_remote = true to serve it beyond this machine"
        )


class Dashboard:
    """The dashboard as the gate's approver and as a server started with the core."""

    name = "dashboard"

    def __init__(self, settings: DashboardConfig, host: str | None = None, port: int | None = None):
        self.host = host or settings.host
        self.port = settings.port if port is None else port
        check_host(settings, self.host)
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self.door: ReadingDoor | None = None
        # Pages live under a path no other server can guess, new at each start; the session
        # cookie is scoped to it (augure/dashboard/auth.py).
        self.base = "/" + secrets.token_urlsafe(16)

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any] | None:
        return None  # the approvals page reads the pending requests from the audit

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        return None  # a decided request simply leaves the approvals page

    @property
    def root(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def pages(self) -> str:
        """Where the pages are: known only to whoever logged in (the login redirects there)."""
        return self.root + self.base

    async def start(self, door: ReadingDoor) -> None:
        try:
            import uvicorn

            from augure.dashboard.app import QuietServer, build
            from augure.dashboard.hosts import own_hosts
        except ImportError as exc:
            raise UsageError(f"the dashboard needs {exc.name}: {EXTRA}") from None
        self.door = door
        listener = self._bind()
        self.port = listener.getsockname()[1]  # the one given, or the free one port 0 got
        app = build(
            door,
            secure_cookie=not loopback(self.host),
            base=self.base,
            hosts=own_hosts(self.host, self.port, loopback(self.host)),
        )
        # No access log: a login URL carries its one-time token in the query string.
        config = uvicorn.Config(
            app, access_log=False, log_config=None, lifespan="off", server_header=False
        )
        server = QuietServer(config)
        self._server = server
        self._task = asyncio.create_task(server.serve(sockets=[listener]))
        while not server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():
            raise UsageError(f"the dashboard could not start on {self.root}")
        door.logins.served_at = self.root
        log.info("dashboard serving on %s", self.root)
        # On stdout, never in the log: the link holds a login token.
        print(f"Dashboard on {self.root}; log in (once, within 10 minutes) at:", flush=True)
        print(door.owner.login_link(), flush=True)

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it. Without it a page's body, written after its
        # headers, waited ~40 ms on a kept-alive connection for the browser's delayed ACK.
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            listener.bind((self.host, self.port))
        except OSError as exc:
            listener.close()
            raise UsageError(
                f"the dashboard cannot listen on {self.root} ({exc.strerror or exc}); "
                "choose another [dashboard] port or --port"
            ) from None
        listener.listen(128)
        return listener

    async def stop(self) -> None:
        if self.door is not None:
            self.door.logins.served_at = None
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._server = self._task = None
