"""`browser`: a real Chromium the model drives through an accessibility snapshot with refs.

Egress is `read_only` for every action, clicks and typing included: a browsing session is
many small steps, and asking the owner at each one would make the tool unusable. The price
is that the model can submit a web form without asking; an owner who does not accept that
disables the tool (`[tools] disabled = ["browser"]`) or denies hosts with rules on the
`browser:open:<host><path>` target. What the browser can reach is fenced by the SSRF guard
(see proxy.py), which is not a judgment call.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, ValidationError

from augure.approval import canonical
from augure.config.settings import Config
from augure.tools.base import Egress, RunContext, ToolResult, describe, tool
from augure.tools.browser.settings import BrowserSettings, find_executable
from augure.tools.http.settings import HttpSettings, RequestError, load_settings

if TYPE_CHECKING:
    from augure.tools.browser.session import BrowserPool

Action = Literal[
    "open", "navigate", "snapshot", "click", "type", "press", "extract", "screenshot", "close"
]
NOT_CONFIGURED = (
    "install Chromium (apt-get install chromium) or set [tools.browser] executable_path"
)


def page_bytes(config: Config) -> int:
    try:
        return load_settings(config).max_response_bytes
    except RequestError:  # the http tool reports its own configuration
        return HttpSettings().max_response_bytes


def settings_of(config: Config) -> BrowserSettings:
    return BrowserSettings.model_validate(config.tools.section("browser"))


def allow_private(config: Config) -> bool:
    value = config.tools.section("http").get("allow_private_networks", False)
    # From AUGURE__TOOLS__HTTP__ALLOW_PRIVATE_NETWORKS the value arrives as a string.
    return (
        value.strip().lower() in ("1", "true", "yes", "on")
        if isinstance(value, str)
        else bool(value)
    )


def check(config: Config) -> str | None:
    try:
        settings = settings_of(config)
    except ValidationError as exc:
        return f"fix [tools.browser]: {describe(exc)}"
    return None if find_executable(settings) else NOT_CONFIGURED


_shared: BrowserPool | None = None


async def shared_pool(config: Config) -> BrowserPool:
    """The app's one pool; rebuilt when the settings change."""
    global _shared
    # The pool and its guard proxy load at the first call: most bots never browse
    # (docs/performance.md).
    from augure.tools.browser.session import BrowserError, BrowserPool

    settings = settings_of(config)
    executable = find_executable(settings)
    if executable is None:
        raise BrowserError(f"the browser is not configured: {NOT_CONFIGURED}")
    wanted = (executable, settings.headless, allow_private(config))
    loop = asyncio.get_running_loop()
    if _shared is not None:
        current = (_shared.executable, _shared.headless, _shared.allow_private)
        if _shared.loop not in (None, loop):
            _shared = None  # its loop is gone (a new asyncio.run); nothing left to close
        elif current != wanted:
            await _shared.close()
            _shared = None
    if _shared is None:
        _shared = BrowserPool(executable, headless=settings.headless, allow_private=wanted[2])
    return _shared


async def shutdown() -> None:
    """Close the shared browser; the app calls this when it stops."""
    global _shared
    pool, _shared = _shared, None
    if pool is not None and pool.loop in (None, asyncio.get_running_loop()):
        await pool.close()


async def probe(config: Config) -> str:
    """For `augure doctor`: launch Chromium once and say which; raises BrowserError."""
    from augure.tools.browser.actions import first_line, playwright_error
    from augure.tools.browser.session import FLAGS, BrowserError

    problem = check(config)
    if problem:
        raise BrowserError(problem)
    settings = settings_of(config)
    executable = find_executable(settings) or ""
    started = time.perf_counter()
    try:
        from playwright.async_api import async_playwright

        async with async_playwright() as playwright:
            launched = await playwright.chromium.launch(
                executable_path=executable, headless=settings.headless, args=FLAGS
            )
            version = launched.version
            await launched.close()
    except playwright_error() as exc:
        raise BrowserError(f"Chromium at {executable} does not start: {first_line(exc)}") from None
    return f"Chromium {version} at {executable} (started in {time.perf_counter() - started:.1f} s)"


def _leaves(arguments: Any) -> list[str]:
    """What an action sends to a site: the address it opens, the text it types into a
    field; a click or a key press is a step on a page that may be anyone's (counted as a
    fetch). Typing is such a step too: text echoed from a page is not composed, yet which
    bit of the page goes into which field can spell data out, one field at a time."""
    if arguments.action in ("open", "navigate"):
        return [arguments.url or ""]
    if arguments.action == "type":
        return [arguments.text, ""] if arguments.text else [""]
    return [""] if arguments.action in ("click", "press") else []


def _target(arguments: Any) -> str:
    if arguments.action in ("open", "navigate") and arguments.url:
        # Chromium resolves `%2e%2e`, `\\`, `HOST.` and IPv4 shorthands: so does the target,
        # or a deny on the one spelling would not stop the other.
        try:
            parts = urlsplit(arguments.url.strip())
            host = canonical.host(parts.hostname or "")
        except ValueError:
            return f"browser:{arguments.action}:{arguments.url}"
        return f"browser:{arguments.action}:{host}{canonical.path(parts.path)}"
    return f"browser:{arguments.action}"


@tool(
    "browser",
    egress=Egress.READ_ONLY,
    check=check,
    target=_target,
    leaves=lambda p: _leaves(p),
    untrusted=True,
    background=True,
    deferred=True,
    safe=False,  # one page, one action at a time
    timeout=90.0,
    mode="stateful",  # says what it is doing: starting Chromium and loading can be slow
)
async def browser(
    ctx: RunContext,
    action: Annotated[
        Action,
        Field(
            description="open: start a session at url; navigate: go to url in a session; "
            "snapshot: the page as an accessibility tree with [ref=eN] ids; click, type "
            "(text), press (key, e.g. Enter): on a ref or selector; extract: readable "
            "text of the page or an element; screenshot: PNG of the page or an element; "
            "close: end the session"
        ),
    ],
    session: Annotated[
        str, Field(description="session name; each has its own page and cookies", max_length=64)
    ] = "default",
    url: Annotated[str | None, Field(description="http(s) URL, for open and navigate")] = None,
    ref: Annotated[str | None, Field(description="element ref from the last snapshot")] = None,
    selector: Annotated[str | None, Field(description="CSS selector, when no ref fits")] = None,
    text: Annotated[str | None, Field(description="text to type (replaces the field)")] = None,
    key: Annotated[str | None, Field(description="key to press, e.g. Enter, Tab")] = None,
) -> ToolResult:
    """A real browser, for pages needing JavaScript, forms or clicks. Chromium: open a
    page, read it as a snapshot with element refs, click, type, press keys, extract text,
    take screenshots."""
    ctx.progress(_doing(action, session, url))
    # What runs the tool loads at its first call: most bots never browse (docs/performance.md).
    from augure.tools.browser.actions import BrowserStep, act
    from augure.tools.browser.session import BrowserError

    try:
        pool = await shared_pool(ctx.config)
    except BrowserError as exc:
        return ToolResult.error(str(exc))
    except ValidationError as exc:
        return ToolResult.error(f"fix [tools.browser]: {describe(exc)}")
    call = BrowserStep(action, session, url, ref, selector, text, key, page_bytes(ctx.config))
    return await act(pool, call)


def _doing(action: str, session: str, url: str | None) -> str:
    if action in ("open", "navigate") and url:
        return f"{'opening' if action == 'open' else 'navigating to'} {url}"
    return f"{action} in session {session!r}"
