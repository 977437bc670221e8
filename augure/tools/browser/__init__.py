"""The `browser` tool: Chromium through Playwright, which is imported when the tool first runs.
`tool` declares it, `session` keeps the browser and its pages (and the `[tools.browser]`
settings), `proxy` is the guard every request of the page passes through."""

from augure.tools.browser.session import BrowserSettings
from augure.tools.browser.tool import BrowserStep, act, browser, probe, shutdown

__all__ = ["BrowserSettings", "BrowserStep", "act", "browser", "probe", "shutdown"]
