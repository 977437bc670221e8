"""How fast the dashboard serves the invocations page of a home with 100,000 records
(docs/reference/dashboard.md#pages).

Run: `python -m bench.dashboard` from the repository root, after `pip install -e '.[dev]'`.
It fills a fresh home's state.db with RECORDS invocations (spread over 90 days, 20 tools, every
status and origin), starts a real `augure dashboard --port 0` on it, logs in with the printed
one-time link, and prints the median and p95 of REQUESTS requests of:
- the first page of /invocations (no filter);
- the first page filtered by one tool, and by one status;
- a page deep in the listing (its `after` cursor taken from the 20th page).

`python -m bench.dashboard --screenshots docs/dashboard/` also saves a PNG of each page, taken
in headless Chromium (Debian `chromium`), into that folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlparse

import httpx

from augure.store.state import Store
from bench.common import report
from tests.e2e.helpers import start_dashboard

RECORDS = 100_000
REQUESTS = 50
TOOLS = [f"tool_{n:02d}" for n in range(18)] + ["http", "send_email"]
STATUSES = ["completed"] * 8 + ["failed", "rejected", "refused", "interrupted"]
ORIGINS = ["chat"] * 6 + ["job", "skill", "code", "background"]
DAY = 86_400.0


async def fill(home: Path) -> None:
    """state.db with the current schema, then RECORDS rows written in one transaction."""
    store = await Store.open(home / "state.db")
    await store.close()
    rng = random.Random(19)
    now = time.time()
    rows = []
    for n in range(RECORDS):
        status = rng.choice(STATUSES)
        created = now - rng.random() * 90 * DAY
        rows.append(
            (
                f"{n:08x}",
                str(rng.randrange(1000, 1003)),
                rng.choice(TOOLS),
                rng.choice(ORIGINS),
                json.dumps({"query": f"request number {n}"}),
                f"output of call {n}: " + "lorem ipsum " * rng.randrange(1, 40),
                status,
                "rejected" if status == "rejected" else "not_required",
                created,
                created + rng.random() * 5,
            )
        )
    with sqlite3.connect(home / "state.db") as db:
        db.executemany(
            "INSERT INTO invocations (id, chat_id, tool, origin, input, output, status, "
            "approval_status, created_at, completed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        sample(db, now, rng)


def sample(db: sqlite3.Connection, now: float, rng: random.Random) -> None:
    """A little of everything else, so each page has something to show."""
    db.execute(
        "INSERT INTO invocations (id, chat_id, tool, origin, input, output, status, "
        "approval_status, created_at) VALUES ('hostile1', '1001', 'http', 'chat', ?, ?, "
        "'completed', 'not_required', ?)",
        (
            json.dumps({"url": "https://example.com/page"}),
            "<untrusted_content source=http>\n<script>alert('hi')</script> Great prices!\n"
            "</untrusted_content>",
            now + 1,
        ),
    )
    db.executemany(
        "INSERT INTO rules (effect, pattern, created_by, created_at) VALUES (?, ?, ?, ?)",
        [
            ("allow", "send_email:to=alice@example.com", "telegram:1001", now),
            ("deny", "http:host=evil.example", "cli", now),
        ],
    )
    tomorrow = time.strftime("%Y-%m-%d", time.gmtime(now + DAY))
    db.executemany(
        "INSERT INTO jobs (id, cron, timezone, prompt, chat_id, next_run, created_at, paused) "
        "VALUES (?, ?, 'UTC', ?, '1001', ?, ?, ?)",
        [
            ("morning", "0 8 * * *", "Summarise my email", f"{tomorrow}T08:00:00+00:00", now, 0),
            ("plants", "30 18 * * *", "Water the plants?", f"{tomorrow}T18:30:00+00:00", now, 1),
        ],
    )
    tasks(db, now)
    db.executemany(
        "INSERT INTO usage (chat_id, model, prompt_tokens, completion_tokens, llm_calls, "
        "created_at) VALUES ('1001', 'gpt-4o-mini', ?, ?, 1, ?)",
        [
            (rng.randrange(1500, 9000), rng.randrange(100, 900), now - rng.random() * 30 * DAY)
            for _ in range(400)
        ],
    )


def tasks(db: sqlite3.Connection, now: float) -> None:
    """Background tasks: the standalone dashboard runs none, so none shows a Cancel button."""
    db.executemany(
        "INSERT INTO tasks (id, chat_id, tool, arguments, status, progress, result, "
        "created_at, finished_at) VALUES (?, '1001', ?, ?, ?, ?, ?, ?, ?)",
        [
            ("k7d2qa", "opencode", json.dumps({"task": "add tests for the parser"}), "done",
             "running pytest", "All 42 tests pass; the parser handles empty input now.",
             now - 3 * 3600, now - 3 * 3600 + 412),
            ("p3x9mr", "browser", json.dumps({"url": "https://example.com/pricing"}), "done",
             None, "<untrusted_content source=\"browser\">\n<script>alert('hi')</script> Pro plan: "
             "12 EUR a month\n</untrusted_content>", now - 1800, now - 1790),
            ("w4h8tn", "sandbox_exec", json.dumps({"command": "make release"}), "failed",
             "step 3 of 5", "Error: sandbox_exec failed: exit status 2", now - 900, now - 880),
            ("c2m6vb", "web_search", json.dumps({"query": "train times"}), "cancelled",
             None, "Cancelled by the owner.", now - 600, now - 590),
        ],
    )  # fmt: skip


def pending(home: Path) -> None:
    """A request waiting for a decision, written once the dashboard is up: at its start,
    `augure dashboard` rejects what a stopped bot left pending."""
    arguments = {"to": "alice@example.com", "subject": "Lunch?", "body": "Friday 12:30"}
    with sqlite3.connect(home / "state.db") as db:
        db.execute(
            "INSERT INTO invocations (id, chat_id, tool, origin, input, status, approval_status, "
            "created_at) VALUES ('pending1', '1001', 'send_email', 'chat', ?, 'pending', "
            "'pending', ?)",
            (json.dumps(arguments), time.time()),
        )


async def serve(home: Path) -> tuple[asyncio.subprocess.Process, str]:
    """`augure dashboard --port 0` on the home; returns it and its one-time login link."""
    env = {"AUGURE_HOME": str(home), "OPENAI_API_KEY": "sk-bench", "PATH": "/usr/bin:/bin"}
    return await start_dashboard(env, timeout=60, stderr=asyncio.subprocess.DEVNULL)


def timed(client: httpx.Client, url: str) -> tuple[float, float]:
    samples = []
    client.get(url).raise_for_status()  # warm: the first query reads the pages from disk
    for _ in range(REQUESTS):
        started = time.perf_counter()
        client.get(url).raise_for_status()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), statistics.quantiles(samples, n=20)[-1]


def deep_cursor(client: httpx.Client, root: str) -> str:
    url = f"{root}/invocations"
    for _ in range(20):
        page = client.get(url).text
        marker = page.index('rel="next" href="') + len('rel="next" href="')
        url = urljoin(url, page[marker : page.index('"', marker)].replace("&amp;", "&"))
    return url


async def screenshots(root: str, cookie: str, folder: Path) -> None:
    from playwright.async_api import async_playwright

    from augure.tools.browser.settings import BrowserSettings, find_executable

    chromium = find_executable(BrowserSettings())
    if chromium is None:
        raise SystemExit("screenshots need Chromium (apt-get install chromium)")
    folder.mkdir(parents=True, exist_ok=True)
    pages = {
        "overview": "/",
        "approvals": "/approvals",
        "invocations": "/invocations",
        "invocation": "/invocations/hostile1",
        "rules": "/rules",
        "jobs": "/jobs",
        "tasks": "/tasks",
        "skills": "/skills",
        "usage": "/usage",
        "memory": "/memory?path=identity.md",
    }
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        context = await browser.new_context(viewport={"width": 1100, "height": 700})
        where = urlparse(root)  # the cookie's Path is the pages' per-run prefix
        await context.add_cookies(
            [
                {
                    "name": "augure_session",
                    "value": cookie,
                    "domain": where.hostname or "",
                    "path": where.path,
                }
            ]
        )
        page = await context.new_page()
        for name, path in pages.items():
            await page.goto(root + path)
            await page.screenshot(path=str(folder / f"{name}.png"))
        unauthenticated = await browser.new_context(viewport={"width": 1100, "height": 500})
        login = await unauthenticated.new_page()
        await login.goto(root + "/")
        await login.screenshot(path=str(folder / "login.png"))
        await browser.close()
    print(f"screenshots: {len(pages) + 1} PNGs in {folder}")


async def main(shots: Path | None) -> None:
    with tempfile.TemporaryDirectory(prefix="augure-dash-bench-") as folder:
        home = Path(folder)
        started = time.perf_counter()
        await fill(home)
        print(f"filled {RECORDS:,} invocations in {time.perf_counter() - started:.1f} s")
        process, link = await serve(home)
        pending(home)
        try:
            with httpx.Client(follow_redirects=False, timeout=30) as client:
                login = client.get(link)
                assert login.status_code == 303, login.status_code
                # The pages live under the per-run prefix the login redirects to.
                root = link.split("/login")[0] + login.headers["location"].rstrip("/")
                cookie = client.cookies["augure_session"]
                figures = {}
                for label, url in (
                    ("invocations page", f"{root}/invocations"),
                    ("filtered by tool", f"{root}/invocations?tool=http"),
                    ("filtered by status", f"{root}/invocations?status=failed"),
                    ("page 21", deep_cursor(client, root)),
                ):
                    median, p95 = timed(client, url)
                    query = parse_qs(urlparse(url).query)
                    assert label != "page 21" or "after" in query
                    figures[f"{label} median"] = (median, "ms")
                    figures[f"{label} p95"] = (p95, "ms")
            report("dashboard", figures)
            if shots is not None:
                await screenshots(root, cookie, shots)
        finally:
            process.terminate()
            await asyncio.wait_for(process.wait(), 15)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshots", type=Path, help="also save a PNG of each page here")
    asyncio.run(main(parser.parse_args().screenshots))
