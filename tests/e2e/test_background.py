"""Background work (docs/reference/execution.md#background-work) through the real bot: released
calls, their result as a new turn, task_status / task_cancel, /tasks with Cancel buttons, `augure
tasks`, and a crash."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from augure.channels.telegram.commands.tasks import NOT_OWNER
from augure.store.tasks import TaskRow
from augure.tools.base import RunContext
from augure.tools.base import tool as tool_of
from augure.tools.opencode import opencode
from augure.tools.result import wrap_untrusted
from augure.tools.sandbox_exec import sandbox_exec
from augure.tools.web_search import web_search
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import (
    approval_message,
    augure,
    buttons,
    delivered,
    environment,
    final_reply,
    launch,
    tool_results,
    until,
)
from tests.e2e.test_durability import restart_twice
from tests.e2e.test_sandbox import gone, marker, processes_with
from tests.e2e.test_web_http import TAVILY_KEY, restart_with
from tests.fakes.openai import FakeOpenAI, ToolCall, text, tool, tools
from tests.fakes.search import FakeSearch
from tests.fakes.telegram import FakeTelegram

STARTED = re.compile(r"Started in the background as task ([a-z2-9]{6})\.")
HELPER = OWNER + 2  # a second allowed user: not the owner


class Crawl:
    """Lets a test decide when the crawl ends."""

    done: asyncio.Event | None = None


@tool_of("crawl", mode="stateful", background=True)
async def crawl(ctx: RunContext, pages: int) -> str:
    """Crawl some pages, saying how far it got (a long stateful job)."""
    for page in range(1, pages + 1):
        ctx.progress(f"page {page} of {pages}")
    Crawl.done = Crawl.done or asyncio.Event()
    await Crawl.done.wait()
    return f"crawled {pages} pages"


def fresh_crawl() -> None:
    Crawl.done = None


pytestmark = pytest.mark.tools(
    *test_tools.TEST_TOOLS, sandbox_exec, opencode, web_search, crawl, reset=fresh_crawl
)


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {"AUGURE_ALLOWED_USERS": f"{OWNER},{HELPER}"}


@pytest.fixture(autouse=True)
def no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TAVILY_API_KEY", "EXA_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def started(llm: FakeOpenAI, request: int) -> list[str]:
    """The task ids the released calls of that request's tool results name."""
    ids = []
    for result in tool_results(llm, request):
        match = STARTED.fullmatch(result)
        assert match, result
        ids.append(match.group(1))
    return ids


def asked(llm: FakeOpenAI, request: int) -> str:
    return str([m for m in llm.requests[request]["messages"] if m["role"] == "user"][-1]["content"])


async def task(bot: Bot, task_id: str) -> TaskRow:
    assert bot.core is not None and bot.core.tasks is not None
    row = await bot.core.tasks.tasks.get(task_id)
    assert row is not None
    return row


async def settled(bot: Bot, task_id: str) -> TaskRow:
    """The row once its task has ended."""
    for _ in range(200):
        row = await task(bot, task_id)
        if row.status != "running":
            return row
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never ended")


def rows(db: Path, query: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return connection.execute(query).fetchall()


async def appears(probe: Any) -> None:
    for _ in range(200):
        if probe():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("it never appeared")


# -- release and report back --------------------------------------------------------------


@pytest.mark.system_package("bubblewrap")
async def test_a_background_sandbox_call_returns_at_once_and_reports_in_a_new_turn(
    bot: Bot,
) -> None:
    command = "echo made in the background"
    bot.llm.script(
        tool("sandbox_exec", {"command": command, "background": True}),
        text("Started it."),
        text("The sandbox said: made in the background."),
    )
    bot.telegram.inject_message(OWNER, "run it in the background")
    # The turn is over while the call still waits for the owner's Approve.
    await final_reply(bot, "Started it.")
    (task_id,) = started(bot.llm, 1)
    assert (await task(bot, task_id)).status == "running"
    request = await approval_message(bot)
    assert "(chat>background)" in request["text"] and command in request["text"]
    bot.telegram.press_button(OWNER, request["message_id"], buttons(request)["Approve"])
    await delivered(bot.telegram, "The sandbox said: made in the background.")

    told = asked(bot.llm, 2)
    assert told.startswith(f"[Background task {task_id} (sandbox_exec) finished.")
    assert "stdout:\nmade in the background" in told
    row = await task(bot, task_id)
    assert row.status == "done" and row.arguments == {"command": command}
    assert row.result is not None and "made in the background" in row.result
    db = bot.home / "state.db"
    assert rows(db, f"SELECT origin, status FROM invocations WHERE id = '{row.invocation}'") == [
        ("chat>background", "completed")
    ]
    origins = [r[0] for r in rows(db, "SELECT origin FROM turns ORDER BY started_at")]
    assert origins == ["chat", "chat>background"]


async def test_the_chat_answers_while_five_background_jobs_run(bot: Bot) -> None:
    jobs = [ToolCall("slow_job", {"name": f"job{n}", "background": True}) for n in range(5)]
    bot.llm.script(tools(*jobs), text("Five started."), text("Still here."))
    bot.telegram.inject_message(OWNER, "start five long jobs")
    await final_reply(bot, "Five started.")
    ids = started(bot.llm, 1)
    await appears(lambda: all((bot.home / f"started-job{n}").exists() for n in range(5)))

    bot.telegram.inject_message(OWNER, "are you there?")
    await final_reply(bot, "Still here.")
    assert [(await task(bot, i)).status for i in ids] == ["running"] * 5
    assert test_tools.outbox(bot.home) == []  # none of them has finished


async def test_the_flag_is_offered_only_where_allowed_and_refused_elsewhere(bot: Bot) -> None:
    bot.llm.script(
        tools(
            ToolCall("memory_read", {"background": True}),
            ToolCall("slow_job", {"name": "x", "background": "yes"}),
            ToolCall("slow_job", {"background": True}),
        ),
        text("Fine."),
    )
    bot.telegram.inject_message(OWNER, "try")
    await final_reply(bot, "Fine.")
    not_supported, not_a_boolean, missing = tool_results(bot.llm, 1)
    assert not_supported == "Error: invalid arguments for memory_read: background: not supported"
    assert (
        not_a_boolean == "Error: invalid arguments for slow_job: background: must be true or false"
    )
    # Invalid arguments are said at once, not released to fail later.
    assert missing.startswith("Error: invalid arguments for slow_job: name")
    schemas = {
        t["function"]["name"]: t["function"]["parameters"] for t in bot.llm.requests[0]["tools"]
    }
    assert schemas["slow_job"]["properties"]["background"] == {"type": "boolean"}
    assert "background" not in schemas["memory_read"]["properties"]
    assert "background" not in schemas["slow_job"].get("required", [])
    assert bot.core is not None and bot.core.tasks is not None
    assert await bot.core.tasks.tasks.list() == []


# -- task_status, task_cancel, /tasks, augure tasks ----------------------------------------


async def test_task_status_lists_running_work_and_shows_one_in_full(bot: Bot) -> None:
    bot.llm.script(
        tool("slow_job", {"name": "crawl", "background": True}),
        text("Started."),
        tool("task_status", {}),
        text("One runs."),
    )
    bot.telegram.inject_message(OWNER, "crawl in the background")
    await final_reply(bot, "Started.")
    (task_id,) = started(bot.llm, 1)
    bot.telegram.inject_message(OWNER, "what runs?")
    await final_reply(bot, "One runs.")
    listing = tool_results(bot.llm, 3)[-1]
    assert re.fullmatch(rf"{task_id} slow_job — running, \d+s", listing), listing

    bot.llm.script(tool("task_status", {"id": task_id}), text("Still crawling."))
    bot.telegram.inject_message(OWNER, "and that one?")
    await final_reply(bot, "Still crawling.")
    shown = tool_results(bot.llm, 5)[-1]
    assert shown.startswith(f"Task {task_id}: slow_job, running, ")


async def test_a_stateful_tools_progress_reaches_the_task_and_task_status(bot: Bot) -> None:
    bot.llm.script(
        tool("crawl", {"pages": 3, "background": True}),
        text("Crawling."),
        tool("task_status", {}),
        text("On page 3."),
        text("Crawled all three."),
    )
    bot.telegram.inject_message(OWNER, "crawl three pages in the background")
    await final_reply(bot, "Crawling.")
    (task_id,) = started(bot.llm, 1)
    for _ in range(200):
        if (await task(bot, task_id)).progress == "page 3 of 3":
            break
        await asyncio.sleep(0.05)
    bot.telegram.inject_message(OWNER, "how far?")
    await final_reply(bot, "On page 3.")
    listing = tool_results(bot.llm, 3)[-1]
    assert listing.startswith(f"{task_id} crawl — running, ") and listing.endswith(": page 3 of 3")

    assert Crawl.done is not None
    Crawl.done.set()
    await final_reply(bot, "Crawled all three.")
    assert asked(bot.llm, 4).endswith("finished. Its result:]\ncrawled 3 pages")
    row = await task(bot, task_id)
    assert (row.status, row.progress, row.result) == ("done", "page 3 of 3", "crawled 3 pages")


@pytest.mark.system_package("bubblewrap")
async def test_task_cancel_stops_a_sandbox_job_and_its_processes_are_gone(bot: Bot) -> None:
    tag = marker()
    bot.llm.script(
        tool("sandbox_exec", {"command": f": {tag}; sleep 60", "background": True}),
        text("Sleeping in the background."),
    )
    bot.telegram.inject_message(OWNER, "sleep a minute in the background")
    await final_reply(bot, "Sleeping in the background.")
    (task_id,) = started(bot.llm, 1)
    request = await approval_message(bot)
    bot.telegram.press_button(OWNER, request["message_id"], buttons(request)["Approve"])
    await appears(lambda: processes_with(tag.encode()))

    bot.llm.script(tool("task_cancel", {"id": task_id}), text("Cancelled it."))
    bot.telegram.inject_message(OWNER, "cancel that")
    await final_reply(bot, "Cancelled it.")
    assert tool_results(bot.llm, 3)[-1] == f"Cancelled task {task_id}."
    assert await gone(lambda: processes_with(tag.encode())) == []
    row = await task(bot, task_id)
    assert row.status == "cancelled" and row.finished_at is not None
    await bot.telegram.wait_idle(quiet=0.5, timeout=10)
    assert len(bot.llm.requests) == 4  # a cancelled task reports nothing back
    db = bot.home / "state.db"
    (status,) = rows(db, f"SELECT status FROM invocations WHERE id = '{row.invocation}'")
    assert status == ("failed",)


SLOW_AGENT = """#!/usr/bin/python3
import time
print("thinking", flush=True)
time.sleep(60)
"""


@pytest.mark.system_package("bubblewrap")
async def test_the_cancel_button_stops_a_coding_agent_and_its_processes_are_gone(
    bot: Bot, tmp_path: Path
) -> None:
    agent = tmp_path / "agent-bin" / "slow-agent"
    agent.parent.mkdir()
    agent.write_text(SLOW_AGENT)
    agent.chmod(0o755)
    await bot.stop()
    (bot.home / "augure.toml").write_text(f'[tools.opencode]\ncommand = "{agent}"\n')
    await bot.start()
    tag = marker()
    bot.llm.script(tool("opencode", {"task": tag, "background": True}), text("Agent started."))
    bot.telegram.inject_message(OWNER, "have the agent work on it in the background")
    await final_reply(bot, "Agent started.")
    (task_id,) = started(bot.llm, 1)
    request = await approval_message(bot)
    bot.telegram.press_button(OWNER, request["message_id"], buttons(request)["Approve"])
    await appears(lambda: processes_with(tag.encode()))

    bot.telegram.inject_message(OWNER, "/tasks")
    listing = await approval_message(bot, count=2)
    bot.telegram.press_button(
        OWNER, listing["message_id"], buttons(listing)[f"Cancel {task_id} (opencode)"]
    )
    await bot.telegram.wait_for(
        lambda c: c.method == "answerCallbackQuery" and "Cancelled" in str(c.params.get("text"))
    )
    assert await gone(lambda: processes_with(tag.encode())) == []
    assert (await task(bot, task_id)).status == "cancelled"


async def test_tasks_command_cancel_button_counts_only_the_owners_press(bot: Bot) -> None:
    bot.llm.script(tool("slow_job", {"name": "sync", "background": True}), text("Started."))
    bot.telegram.inject_message(OWNER, "sync in the background")
    await final_reply(bot, "Started.")
    (task_id,) = started(bot.llm, 1)

    bot.telegram.inject_message(OWNER, "/tasks")
    listing = await approval_message(bot)  # the first message with buttons
    assert f"{task_id} slow_job — running" in listing["text"]
    (label, data), *_ = buttons(listing).items()
    assert label == f"Cancel {task_id} (slow_job)" and len(buttons(listing)) == 1

    bot.telegram.press_button(HELPER, listing["message_id"], data, chat_id=OWNER)
    await bot.telegram.wait_for("answerCallbackQuery")
    assert bot.telegram.callback_answers[-1]["text"] == NOT_OWNER
    assert (await task(bot, task_id)).status == "running"

    bot.telegram.press_button(OWNER, listing["message_id"], data)
    await bot.telegram.wait_for("answerCallbackQuery", count=2)
    assert bot.telegram.callback_answers[-1]["text"] == f"Cancelled task {task_id}."
    assert (await settled(bot, task_id)).status == "cancelled"

    env = environment(bot.home, bot_environment(bot.home, bot.telegram, bot.llm))
    code, out, _ = await augure("tasks", "--json", env=env)
    assert code == 0, out
    (listed,) = json.loads(out)
    assert listed["id"] == task_id and listed["status"] == "cancelled"
    assert listed["tool"] == "slow_job" and listed["arguments"] == {"name": "sync"}
    code, out, _ = await augure("tasks", env=env)
    assert code == 0 and out.startswith(f"{task_id} slow_job — cancelled, ")


async def test_an_untrusted_background_result_stays_wrapped(bot: Bot) -> None:
    async with FakeSearch(TAVILY_KEY, "exa", "searxng") as search:
        await restart_with(
            bot,
            bot.extra_env
            | {
                "TAVILY_API_KEY": TAVILY_KEY,
                "AUGURE__TOOLS__WEB_SEARCH__BASE_URL": search.base_url("tavily"),
            },
        )
        bot.llm.script(
            tool("web_search", {"query": "augure", "background": True}),
            text("Searching in the background."),
            text("Found it."),
        )
        bot.telegram.inject_message(OWNER, "search augure in the background")
        await final_reply(bot, "Searching in the background.")
        (task_id,) = started(bot.llm, 1)
        await final_reply(bot, "Found it.")
    told = asked(bot.llm, 2)
    header = f"[Background task {task_id} (web_search) finished. Its result:]\n"
    assert told.startswith(header + '<untrusted_content source="web_search">\n1. augure')
    assert told.endswith("</untrusted_content>")
    row = await task(bot, task_id)
    # The row keeps the result and its provenance apart, as data; both readers mark it.
    assert row.source == "web_search" and row.result is not None
    assert told.removeprefix(header) == wrap_untrusted(row.result, "web_search")


# -- a crash with background work running ---------------------------------------------------


async def test_kill_with_background_work_running_tells_the_owner_once(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        process = await launch(env)
        await telegram.wait_polling(timeout=20)
        llm.script(tool("slow_job", {"name": "nightly", "background": True}), text("Started."))
        telegram.inject_message(OWNER, "run the nightly job in the background")
        await final_reply_of(telegram, "Started.")
        db = tmp_path / "state.db"
        await until(
            db,
            "SELECT 1 FROM tasks JOIN invocations ON invocations.id = tasks.invocation "
            "WHERE invocations.status = 'running'",
        )
        process.kill()  # SIGKILL: no chance to clean up
        await process.wait()

        recovered = "was interrupted by a restart and did not finish"
        first, second = await restart_twice(env, telegram, recovered=recovered)
        ((task_id,),) = rows(db, "SELECT id FROM tasks")
        assert f"Background task {task_id} (" in first and "slow_job" in first
        assert "was interrupted by a restart and did not finish" in first
        # One notice for the task, not one more for its call.
        assert first.count("interrupted") == 1 and second == ""
        code, out, _ = await augure("tasks", "--json", env=env)
        assert code == 0 and json.loads(out)[0]["status"] == "interrupted"
    assert test_tools.outbox(tmp_path) == []


async def final_reply_of(telegram: FakeTelegram, expected: str) -> None:
    await telegram.wait_for(
        lambda c: c.method == "sendMessage" and c.params.get("text") == expected, timeout=10
    )


@pytest.mark.system_package("bubblewrap")
async def test_a_stop_while_background_work_awaits_approval_reports_it_interrupted(
    bot: Bot,
) -> None:
    bot.llm.script(
        tool("sandbox_exec", {"command": "touch ran.txt", "background": True}),
        text("Started."),
    )
    bot.telegram.inject_message(OWNER, "touch a file in the background")
    await final_reply(bot, "Started.")
    (task_id,) = started(bot.llm, 1)
    await approval_message(bot)
    await bot.restart()
    await delivered(bot.telegram, f"Background task {task_id} (")
    row = await task(bot, task_id)
    assert row.status == "interrupted" and row.notified
    # Stopping is not the owner saying no: no "rejected" result was reported back.
    assert len(bot.llm.requests) == 2


@pytest.mark.system_package("bubblewrap")
async def test_cancel_while_awaiting_approval_settles_the_request_and_gives_the_count_back(
    bot: Bot,
) -> None:
    await bot.stop()
    (bot.home / "augure.toml").write_text(
        '[profiles.unattended]\norigins = ["background"]\n'
        '[profiles.unattended.tools."sandbox_exec"]\nper_day = 1\n'
    )
    await bot.start()
    bot.llm.script(
        tool("sandbox_exec", {"command": "touch ran.txt", "background": True}),
        text("Waiting for you."),
    )
    bot.telegram.inject_message(OWNER, "touch a file in the background")
    await final_reply(bot, "Waiting for you.")
    (task_id,) = started(bot.llm, 1)
    request = await approval_message(bot)
    assert bot.core is not None and bot.core.tasks is not None
    assert await bot.core.tasks.cancel(task_id) == f"Cancelled task {task_id}."

    invocation = (await task(bot, task_id)).invocation
    assert invocation is None  # it never reached the run step
    ((approval, decided_by),) = rows(
        bot.home / "state.db", "SELECT approval_status, decided_by FROM invocations"
    )
    assert (approval, decided_by) == ("rejected", "cancelled")
    (shown,) = [m for m in bot.telegram.messages(OWNER) if m["message_id"] == request["message_id"]]
    assert not shown.get("reply_markup") and "Rejected (cancelled)" in shown["text"]
    env = environment(bot.home, bot_environment(bot.home, bot.telegram, bot.llm))
    code, out, _ = await augure("limits", "--json", env=env)
    assert code == 0 and json.loads(out)[0]["used_today"] == 0, out
    assert not (bot.home / "workspaces" / str(OWNER) / "ran.txt").exists()


async def test_tasks_command_fits_one_message_however_long_the_results(bot: Bot) -> None:
    assert bot.core is not None and bot.core.tasks is not None
    store = bot.core.tasks.tasks
    long_result = (
        '<untrusted_content source="web_search">\n' + "ä<b>&" * 2000 + ("\n</untrusted_content>")
    )
    for n in range(30):
        task_id = await store.create(str(OWNER), f"mcp__server_{n}__search_everything", {})
        if n % 3:
            await store.finish(task_id, "done", long_result)
        else:
            await store.progress(task_id, "x" * 3000)
    bot.telegram.inject_message(OWNER, "/tasks")
    listing = await approval_message(bot)
    assert listing["text"].startswith("Background tasks")
    assert "ä<b>&" in listing["text"]  # outside content shown as text, not as formatting
    assert len(buttons(listing)) == 10  # one per running task
