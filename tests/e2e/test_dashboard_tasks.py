"""The dashboard's per-job pause and its background-tasks page, in a real headless Chromium
served by `augure run`'s own wiring (the `served` fixture of test_dashboard)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import expect

from tests.e2e.conftest import OWNER
from tests.e2e.helpers import final_reply
from tests.e2e.test_dashboard import SECRET, Served
from tests.e2e.test_dashboard import served as served  # the fixture, shared
from tests.fakes.openai import text, tool

pytestmark = pytest.mark.system_package("chromium")


async def test_pausing_one_job_pauses_only_it(served: Served) -> None:
    scheduler = served.core.scheduler
    for job_id in ("word", "digest"):
        await scheduler.create(prompt=job_id, chat_id=str(OWNER), cron="0 9 * * *", job_id=job_id)
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/jobs")
    await page.locator("#job-word button:has-text('Pause')").click()
    await expect(page.locator("#job-word .job-state")).to_have_text("paused")
    await expect(page.locator("#job-digest .job-state")).to_have_text("active")
    assert "Job paused" in await page.locator(".note").inner_text()
    word, digest = await scheduler.get("word"), await scheduler.get("digest")
    assert word is not None and word.paused and digest is not None and not digest.paused
    assert not await scheduler.paused()  # the scheduler itself keeps running
    assert await page.locator("#scheduler-state").inner_text() == "active"

    await page.locator("#job-word button:has-text('Resume')").click()
    await expect(page.locator("#job-word .job-state")).to_have_text("active")
    word = await scheduler.get("word")
    assert word is not None and not word.paused


async def test_a_running_background_task_is_listed_and_cancel_stops_it(served: Served) -> None:
    bot, manager = served.bot, served.core.tasks
    assert manager is not None
    bot.llm.script(tool("slow_job", {"name": "sync", "background": True}), text("Started."))
    bot.telegram.inject_message(OWNER, "sync in the background")
    await final_reply(bot, "Started.")
    (task_id,) = manager.running()
    context, page = await served.logged_in()
    await page.goto(f"{served.root}/tasks")
    row = page.locator(f"#task-{task_id}")
    assert await row.locator(".task-status").inner_text() == "running"
    assert "slow_job" in await row.inner_text() and '"name": "sync"' in await row.inner_text()

    # The session cookie goes with this request: only the CSRF token is missing.
    refused = await context.request.post(
        f"{served.root}/tasks/{task_id}/cancel", form={}, headers=served.own_origin
    )
    assert refused.status == 403 and manager.running() == [task_id]

    messages = len(bot.telegram.sent("sendMessage"))
    requests = len(bot.llm.requests)
    await row.locator("button:has-text('Cancel')").click()
    await expect(page.locator(f"#task-{task_id} .task-status")).to_have_text("cancelled")
    assert "Task cancelled" in await page.locator(".note").inner_text()
    assert await page.locator(f"#task-{task_id} button").count() == 0
    stored = await manager.tasks.get(task_id)
    assert stored is not None and stored.status == "cancelled" and manager.running() == []
    # The owner is not told in Telegram (they cancelled it) and no turn reports it.
    assert len(bot.telegram.sent("sendMessage")) == messages and len(bot.llm.requests) == requests
    assert not (bot.home / "outbox.jsonl").exists()  # slow_job never finished its work


async def test_a_task_result_is_shown_as_text_with_secrets_masked(served: Served) -> None:
    tasks = served.core.tasks
    assert tasks is not None
    task_id = await tasks.tasks.create(str(OWNER), "fetch_page", {"url": "https://e.com/<b>"})
    hostile = f"<script>window.pwned = 1</script><img src=x onerror='window.pwned = 2'> {SECRET}"
    assert await tasks.tasks.finish(task_id, "done", hostile, progress="<i>page 3</i>")
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/tasks")
    row = page.locator(f"#task-{task_id}")
    shown = await row.locator(".task-result").inner_text()
    assert "<script>window.pwned = 1</script>" in shown  # as text: escaped, not parsed
    assert await row.locator(".task-progress").inner_text() == "<i>page 3</i>"
    assert await page.evaluate("window.pwned") is None
    html: Any = await page.content()
    assert SECRET not in html and "[REDACTED" in shown
    assert await row.locator("button").count() == 0  # it is not running


async def test_the_tasks_page_is_paged(served: Served) -> None:
    tasks = served.core.tasks
    assert tasks is not None
    for n in range(55):
        task_id = await tasks.tasks.create(str(OWNER), "fetch_page", {"n": n})
        await tasks.tasks.finish(task_id, "done", f"result {n}")
    _, page = await served.logged_in()
    await page.goto(f"{served.root}/tasks")
    rows = page.locator("tbody tr")
    await expect(rows).to_have_count(50)
    await page.click("a[rel=next]")
    await expect(rows).to_have_count(5)
    assert await page.locator("a[rel=next]").count() == 0
    await page.click("a[rel=prev]")
    await expect(rows).to_have_count(50)
