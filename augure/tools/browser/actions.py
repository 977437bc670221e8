"""The browser's actions (open, navigate, snapshot, click, type, press, extract, screenshot,
close) on a session of the shared pool; every failure comes back as an error result."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

from augure.tools.browser.proxy import BLOCKED_HEADER
from augure.tools.browser.session import BrowserError, BrowserPool, BrowserSession
from augure.tools.http import HttpSettings
from augure.tools.page_text import PageUnread, page_text
from augure.tools.readable import UNTITLED
from augure.tools.result import Artifact, ToolResult

SNAPSHOT_LIMIT = 10_000
EXTRACT_LIMIT = 20_000
# The most time `extract` gives a page's readable text, well inside the tool's timeout.
EXTRACT_SECONDS = 30.0


# Playwright's error classes by their public names, looked up when an `except` clause is
# reached, by which time a browser call has loaded the API anyway. Imported up front it would
# cost every start ~120 ms (`python -X importtime -c "import playwright.async_api"`), paid
# by bots that never browse; its private `_impl._errors` module is what moves between releases.
def playwright_error() -> type[Exception]:
    from playwright.async_api import Error

    return Error


def playwright_timeout() -> type[Exception]:
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    return PlaywrightTimeout


# Refs are what aria_snapshot(mode="ai") prints (e12, f1e3 inside frames); anything else
# could smuggle selector syntax (">>") into the aria-ref engine.
REF = re.compile(r"^[a-z0-9]{1,16}$")


@dataclass(frozen=True)
class BrowserStep:
    action: str
    session: str
    url: str | None = None
    ref: str | None = None
    selector: str | None = None
    text: str | None = None
    key: str | None = None
    # The most of a page `extract` reads: `[tools.http] max_response_bytes`, as `http` would.
    page_bytes: int = HttpSettings().max_response_bytes


async def act(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    """Run one action; every failure comes back as an error result."""
    try:
        return await ACTIONS[call.action](pool, call)
    except BrowserError as exc:
        return ToolResult.error(str(exc))
    except playwright_timeout() as exc:
        return ToolResult.error(f"{call.action} timed out: {first_line(exc)}")
    except playwright_error() as exc:
        return ToolResult.error(f"{call.action} failed: {first_line(exc)}")


async def _open(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    return await _go(pool, call, create=True)


async def _navigate(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    return await _go(pool, call, create=False)


async def _go(pool: BrowserPool, call: BrowserStep, *, create: bool) -> ToolResult:
    if not call.url:
        raise BrowserError(f"{call.action} needs a url")
    await pool.guard(call.url)
    found = await pool.session(call.session, create=create)
    mark = pool.refusals()
    try:
        response = await found.page.goto(call.url, wait_until="domcontentloaded")
    except playwright_error() as exc:
        refused = pool.refused_since(mark)
        if refused:  # a redirect, or the connection itself, went somewhere forbidden
            raise BrowserError(f"refused to open {call.url}: {refused[-1]}") from None
        raise BrowserError(f"cannot open {call.url}: {first_line(exc)}") from None
    if response is not None and response.headers.get(BLOCKED_HEADER.lower()):
        refused = pool.refused_since(mark)
        reason = refused[-1] if refused else "a redirect led to a private address"
        await found.page.goto("about:blank")
        raise BrowserError(f"refused to open {call.url}: {reason}")
    status = f" (HTTP {response.status})" if response is not None else ""
    head = f"Opened {found.page.url}{status} in session {call.session!r}."
    return ToolResult.ok(f"{head}{_refusal_note(pool, mark)}\n\n{await _snapshot(found.page)}")


async def _snapshot_action(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    found = await pool.session(call.session, create=False)
    return ToolResult.ok(await _snapshot(found.page))


async def _click(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    found = await pool.session(call.session, create=False)
    element, what = await _element(found.page, call)
    mark = pool.refusals()
    opens_tab = await element.evaluate(
        "e => { const a = e.closest('a[href]'); return !!a && !!a.target && a.target !== '_self' }"
    )
    if opens_tab:
        # The new tab arrives after click() returns; wait for it so the session follows it.
        previous = found.page
        async with found.context.expect_page() as tab:
            await element.click()
        found.page = await tab.value
        await previous.close()  # one page per session: the tab replaces it
    else:
        await element.click()
    return ToolResult.ok(f"Clicked {what}. {await _where(found, pool, mark)}")


async def _type(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    if call.text is None:
        raise BrowserError("type needs text")
    found = await pool.session(call.session, create=False)
    element, what = await _element(found.page, call)
    await element.fill(call.text)
    return ToolResult.ok(f"Typed {len(call.text)} characters into {what}.")


async def _press(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    if not call.key:
        raise BrowserError("press needs a key, e.g. Enter")
    found = await pool.session(call.session, create=False)
    mark = pool.refusals()
    if call.ref or call.selector:
        element, what = await _element(found.page, call)
        await element.press(call.key)
        done = f"Pressed {call.key} on {what}."
    else:
        await found.page.keyboard.press(call.key)
        done = f"Pressed {call.key}."
    return ToolResult.ok(f"{done} {await _where(found, pool, mark)}")


async def _extract(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    found = await pool.session(call.session, create=False)
    if call.ref or call.selector:
        element, _ = await _element(found.page, call)
        html = await element.evaluate("element => element.outerHTML")
    else:
        html = await found.page.content()  # the page as it is now, scripts' changes included
    markup = html.encode("utf-8", "replace")
    read = markup[: call.page_bytes].decode("utf-8", "ignore")
    # The same readable text as `http` gives, made in a child process held to budgets, as
    # the page is whatever its server and scripts made of it (augure/tools/page_text.py).
    try:
        text, _ = await page_text(
            read, found.page.url, EXTRACT_SECONDS, 2 * call.page_bytes, mode=UNTITLED
        )
    except PageUnread as exc:
        return ToolResult.error(f"extract: the page's readable text was not made: {exc}; stopped")
    if len(text) > EXTRACT_LIMIT:
        text = f"{text[:EXTRACT_LIMIT]}\n[text cut at {EXTRACT_LIMIT} of {len(text)} characters]"
    if len(markup) > call.page_bytes:
        text += (
            f"\n[only the first {call.page_bytes} of {len(markup)} bytes of the page were read: "
            "[tools.http] max_response_bytes]"
        )
    title = await found.page.title()
    return ToolResult.ok(f"Page: {title}\nURL: {found.page.url}\n\n{text}")


async def _screenshot(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    found = await pool.session(call.session, create=False)
    if call.ref or call.selector:
        element, what = await _element(found.page, call)
        png = await element.screenshot(type="png")
    else:
        png, what = await found.page.screenshot(type="png"), "the page"
    return ToolResult.ok(
        f"Screenshot of {what} at {found.page.url} attached as screenshot.png "
        f"({len(png)} bytes, PNG).",
        [Artifact(type="image", name="screenshot.png", content=png)],
    )


async def _close(pool: BrowserPool, call: BrowserStep) -> ToolResult:
    if await pool.close_session(call.session):
        return ToolResult.ok(f"Closed browser session {call.session!r}.")
    raise BrowserError(f"no open browser session {call.session!r}")


ACTIONS: dict[str, Callable[[BrowserPool, BrowserStep], Awaitable[ToolResult]]] = {
    "open": _open,
    "navigate": _navigate,
    "snapshot": _snapshot_action,
    "click": _click,
    "type": _type,
    "press": _press,
    "extract": _extract,
    "screenshot": _screenshot,
    "close": _close,
}


async def _element(page: Page, call: BrowserStep) -> tuple[Locator, str]:
    if call.ref:
        ref = call.ref.strip().removeprefix("ref=")
        if not REF.match(ref):
            raise BrowserError(f"ref {call.ref!r} is not a ref from snapshot (like e12)")
        element, what = page.locator(f"aria-ref={ref}"), f"ref {ref}"
    elif call.selector:
        element, what = page.locator(call.selector), f"selector {call.selector!r}"
    else:
        raise BrowserError(f"{call.action} needs a ref (from snapshot) or a selector")
    try:
        count = await element.count()
    except playwright_error() as exc:
        raise BrowserError(f"bad {what}: {first_line(exc)}") from None
    if count == 0:
        raise BrowserError(
            f"no element with {what} on the page; refs change when the page does, "
            "so take a new snapshot"
        )
    return element.first, what


async def _snapshot(page: Page) -> str:
    tree = await page.aria_snapshot(mode="ai")
    # Every link carries it; it tells the model nothing the role does not.
    tree = tree.replace(" [cursor=pointer]", "")
    tree = _absolute_links(tree, await page.evaluate("document.baseURI"))
    if len(tree) > SNAPSHOT_LIMIT:
        tree = (
            f"{tree[:SNAPSHOT_LIMIT]}\n[snapshot cut at {SNAPSHOT_LIMIT} of {len(tree)} "
            "characters; use extract for the text, or act on the refs shown]"
        )
    return f"Page: {await page.title()}\nURL: {page.url}\n\n{tree}"


# A link's address as the snapshot prints it: `- /url: /a1`, quoted when YAML needs it.
_LINK = re.compile(r"^(\s*- /url: )(.+)$", re.MULTILINE)


def _absolute_links(tree: str, base: str) -> str:
    """Links as the browser would follow them. After outside content, an address the model
    builds itself (`/a1` joined to the site) is one it composed and asks the owner; the
    whole address shown here can be followed verbatim (docs/security.md)."""

    def resolved(link: re.Match[str]) -> str:
        shown = link[2]
        with contextlib.suppress(ValueError):
            shown = json.loads(shown) if shown.startswith('"') else shown
        return f"{link[1]}{urljoin(base, shown)}"

    return _LINK.sub(resolved, tree)


async def _where(found: BrowserSession, pool: BrowserPool, mark: int) -> str:
    # A click or Enter may start a navigation; wait for it so the next snapshot is fresh.
    with contextlib.suppress(playwright_timeout()):
        await found.page.wait_for_load_state("domcontentloaded", timeout=5_000)
    return f"Now at {found.page.url} ({await found.page.title()}).{_refusal_note(pool, mark)}"


def _refusal_note(pool: BrowserPool, mark: int) -> str:
    refused = pool.refused_since(mark)
    if not refused:
        return ""
    return f" {len(refused)} request(s) to forbidden addresses were blocked ({refused[-1]})."


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
