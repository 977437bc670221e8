"""The `browser` tool: Chromium through Playwright, which is imported when the tool first runs.
`tool` declares it, `settings` is its `[tools.browser]` section; what runs it loads at its first
call (docs/performance.md): `actions` are what it does on a page, `session` keeps the browser
and its pages, `proxy` is the guard every request of the page passes through."""

from augure.tools.browser.settings import BrowserSettings
from augure.tools.browser.tool import browser, probe, shutdown

__all__ = ["BrowserSettings", "browser", "probe", "shutdown"]
