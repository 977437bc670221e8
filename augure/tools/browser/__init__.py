"""The `browser` tool: Chromium through Playwright, which is imported when the tool first runs.
`tool` declares it, `actions` are what it does on a page, `session` keeps the browser and its
pages (and the `[tools.browser]` settings), `proxy` is the guard every request of the page
passes through."""

from augure.tools.browser.actions import BrowserStep, act
from augure.tools.browser.session import BrowserSettings
from augure.tools.browser.tool import browser, probe, shutdown

__all__ = ["BrowserSettings", "BrowserStep", "act", "browser", "probe", "shutdown"]
