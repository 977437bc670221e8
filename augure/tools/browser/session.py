"""One Chromium, launched on first use, and the named sessions (context + page) opened in it.
Loaded at the browser's first call, with its guard proxy (docs/performance.md)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

from augure.common.errors import NotDone
from augure.tools.browser.proxy import GuardProxy, HostCheck, public_only
from augure.tools.netguard import BlockedURL, check_url

log = logging.getLogger(__name__)

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # QUIC is UDP and would not go through the guard proxy.
    "--disable-quic",
    # Shared memory in /tmp, not /dev/shm: a container's is 64 MB, which large pages exhaust
    # (the tab then crashes). Off a container the cost is nil.
    "--disable-dev-shm-usage",
    # WebRTC is UDP too, straight to any address a page names (a STUN server on the LAN):
    # allow it only through the proxy, which speaks no UDP, so it gets nowhere.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--enforce-webrtc-ip-permission-check",
]
IDLE_TTL = 600.0
MAX_SESSIONS = 4
ACTION_TIMEOUT_MS = 10_000
NAVIGATION_TIMEOUT_MS = 30_000


@dataclass
class BrowserSession:
    name: str
    context: BrowserContext
    page: Page
    last_used: float


class BrowserError(NotDone):
    """A failure the model can act on; the message is the whole explanation."""


class BrowserPool:
    """Sessions by name, least recently used first; idle ones close after `ttl` seconds.

    `check` decides which hosts the browser may reach when private networks are not allowed;
    it is applied to the URL before navigating and, through the proxy, to every connection.
    """

    def __init__(
        self,
        executable: str,
        *,
        headless: bool = True,
        allow_private: bool = False,
        check: HostCheck = public_only,
        ttl: float = IDLE_TTL,
        max_sessions: int = MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.executable = executable
        self.headless = headless
        self.allow_private = allow_private
        self.check = check
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.clock = clock
        self.sessions: OrderedDict[str, BrowserSession] = OrderedDict()
        self.proxy: GuardProxy | None = None
        self.launch_seconds: float | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._lock = asyncio.Lock()
        self._reaper: asyncio.TimerHandle | None = None
        self._reaping: set[asyncio.Task[None]] = set()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def guard(self, url: str) -> None:
        """Refuse a URL the browser may not open (raises BrowserError)."""
        try:
            await check_url(url, allow_private=True)  # scheme, host and credentials
            if not self.allow_private:
                parts = urlsplit(url)
                port = parts.port or (443 if parts.scheme == "https" else 80)
                await self.check(parts.hostname or "", port)
        except BlockedURL as exc:
            raise BrowserError(f"refused to open {url}: {exc}") from None
        except OSError as exc:
            raise BrowserError(f"cannot open {url}: {exc}") from None

    async def session(self, name: str, *, create: bool) -> BrowserSession:
        async with self._lock:
            if self._browser is not None and not self._browser.is_connected():
                log.warning("Chromium exited; its %d session(s) are gone", len(self.sessions))
                self.sessions.clear()
                await self._stop_browser()
            await self._expire()
            found = self.sessions.get(name)
            if found is not None and found.page.is_closed():  # the page closed itself
                found.page = await found.context.new_page()
            if found is None:
                if not create:
                    open_names = ", ".join(self.sessions) or "none"
                    raise BrowserError(
                        f"no open browser session {name!r} (open: {open_names}); "
                        "start one with action=open and a url"
                    )
                found = await self._new_session(name)
            found.last_used = self.clock()
            self.sessions.move_to_end(name)
            self._schedule_reaper()
            return found

    async def close_session(self, name: str) -> bool:
        async with self._lock:
            found = self.sessions.pop(name, None)
            if found is not None:
                await _close_quietly(found.context)
            if not self.sessions:
                await self._stop_browser()
            return found is not None

    async def expire(self) -> None:
        async with self._lock:
            await self._expire()

    async def close(self) -> None:
        async with self._lock:
            if self._reaper is not None:
                self._reaper.cancel()
            for found in self.sessions.values():
                await _close_quietly(found.context)
            self.sessions.clear()
            await self._stop_browser()

    def refusals(self) -> int:
        return self.proxy.refusals if self.proxy else 0

    def refused_since(self, mark: int) -> list[str]:
        """Destinations the proxy refused after `refusals()` returned `mark`."""
        if self.proxy is None or self.proxy.refusals <= mark:
            return []
        return list(self.proxy.blocked)[-min(self.proxy.refusals - mark, 50) :]

    async def _expire(self) -> None:
        now = self.clock()
        for name in [n for n, s in self.sessions.items() if now - s.last_used >= self.ttl]:
            log.info("browser session %r closed after %.0f s idle", name, self.ttl)
            await _close_quietly(self.sessions.pop(name).context)
        if not self.sessions:
            # An idle Chromium holds a few hundred MB; relaunching takes well under a second.
            await self._stop_browser()

    async def _new_session(self, name: str) -> BrowserSession:
        while len(self.sessions) >= self.max_sessions:
            oldest, found = self.sessions.popitem(last=False)
            log.info("browser session %r closed: more than %d open", oldest, self.max_sessions)
            await _close_quietly(found.context)
        browser = await self._ensure_browser()
        context = await browser.new_context(
            # A service worker could outlive the page and serve content from a cache.
            service_workers="block",
            accept_downloads=False,
            viewport={"width": 1280, "height": 800},
        )
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
        page = await context.new_page()
        found = BrowserSession(name, context, page, self.clock())
        # A link with target=_blank opens a new tab: follow it, as a person would.
        context.on("page", lambda opened: setattr(found, "page", opened))
        self.sessions[name] = found
        return found

    async def _ensure_browser(self) -> Browser:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        if self._browser is not None:  # crashed: its sessions died with it
            self.sessions.clear()
            await self._stop_browser()
        started = time.perf_counter()
        self.loop = asyncio.get_running_loop()
        proxy: dict[str, Any] | None = None
        if not self.allow_private:
            self.proxy = GuardProxy(self.check)
            # "<-loopback>" removes Chromium's built-in bypass, so localhost is checked too.
            proxy = {"server": await self.proxy.start(), "bypass": "<-loopback>"}
        try:
            from playwright.async_api import async_playwright

            self._playwright = await async_playwright().start()
            launch: dict[str, Any] = {"proxy": proxy} if proxy else {}
            self._browser = await self._playwright.chromium.launch(
                executable_path=self.executable,
                headless=self.headless,
                args=FLAGS,
                **launch,
            )
        except Exception as exc:
            await self._stop_browser()
            raise BrowserError(f"cannot start Chromium at {self.executable}: {exc}") from None
        self.launch_seconds = time.perf_counter() - started
        log.info("Chromium started in %.2f s", self.launch_seconds)
        return self._browser

    async def _stop_browser(self) -> None:
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        proxy, self.proxy = self.proxy, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await browser.close()
        if playwright is not None:
            with contextlib.suppress(Exception):
                await playwright.stop()
        if proxy is not None:
            await proxy.close()

    def _schedule_reaper(self) -> None:
        # Idle sessions also close when nobody calls again, so Chromium does not linger.
        if self._reaper is not None:
            self._reaper.cancel()
        self._reaper = asyncio.get_running_loop().call_later(self.ttl + 1, self._reap)

    def _reap(self) -> None:
        task = asyncio.get_running_loop().create_task(self.expire())
        self._reaping.add(task)
        task.add_done_callback(self._reaping.discard)


async def _close_quietly(context: BrowserContext) -> None:
    with contextlib.suppress(Exception):
        await context.close()
