"""`augure dashboard` from the command line (loopback only unless allowed, beside a bot's held
home too, a login link printed once it serves), and /dashboard in a bot that does not serve it.
Beside a real running bot: test_dashboard_beside_bot.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sqlite3
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from augure.host.home import HomeLock
from augure.store.audit import Audit
from augure.store.state import Store
from augure.store.tasks import Tasks
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import augure, delivered, environment, start_dashboard
from tests.fakes.openai import FakeOpenAI
from tests.fakes.telegram import FakeTelegram


async def test_a_non_loopback_host_is_refused_in_one_line(tmp_path: Path) -> None:
    code, out, err = await augure("dashboard", "--host", "0.0.0.0", env=environment(tmp_path))
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [
        "augure: the dashboard binds only a loopback address, not '0.0.0.0'; "
        "set [dashboard] allow_remote = true to serve it beyond this machine"
    ]


async def test_beside_a_held_home_it_serves_and_takes_no_lock(tmp_path: Path) -> None:
    lock = HomeLock(tmp_path)
    lock.acquire()
    try:
        process, link = await _started(tmp_path)
        try:
            assert await asyncio.to_thread(_status, link) == 200
            code, out, _ = await augure("status", env=environment(tmp_path))
            assert code == 0 and f"pid {os.getpid()}" in out  # still the bot's, not taken
        finally:
            await _stopped(process)
    finally:
        lock.release()


async def test_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code, _, err = await augure("dashboard", "--port", port, env=environment(tmp_path))
    assert code == 1 and "cannot listen on" in err and len(err.splitlines()) == 1


async def _started(home: Path) -> tuple[asyncio.subprocess.Process, str]:
    return await start_dashboard(environment(home, {"OPENAI_API_KEY": "sk-x"}))


async def _stopped(process: asyncio.subprocess.Process) -> None:
    process.send_signal(signal.SIGINT)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), 15)
    assert process.returncode == 0


async def test_it_serves_and_prints_a_one_time_link(tmp_path: Path) -> None:
    process, link = await _started(tmp_path)
    try:
        root = link.split("/login")[0]
        assert root.startswith("http://127.0.0.1:")
        status = await asyncio.to_thread(_status, f"{root}/")
        assert status == 401
        assert await asyncio.to_thread(_status, link) == 200  # the page: a GET spends nothing
        assert await asyncio.to_thread(_status, link) == 200
        assert await asyncio.to_thread(_log_in_status, link) == 200  # followed to the overview
        assert await asyncio.to_thread(_log_in_status, link) == 401  # spent
    finally:
        await _stopped(process)
    assert process.stderr is not None
    log = (await process.stderr.read()).decode()
    assert "token=" not in log and link.split("token=")[1] not in log


def _log_in(opener: urllib.request.OpenerDirector, link: str) -> Any:
    """What the link page's button does: POST its token, from the dashboard's own page."""
    root, token = link.split("/login?token=")
    form = urllib.parse.urlencode({"token": token}).encode()
    request = urllib.request.Request(f"{root}/login", data=form, headers={"Origin": root})
    return opener.open(request, timeout=10)


def _log_in_status(link: str) -> int:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    try:
        with _log_in(opener, link) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def _status(url: str) -> int:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    try:
        with opener.open(url, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


async def test_requests_a_stopped_bot_left_pending_are_rejected(tmp_path: Path) -> None:
    async def seed() -> None:
        store = await Store.open(tmp_path / "state.db")
        await Audit(store).create(
            tool="send_note",
            origin="chat",
            arguments={"to": "alice"},
            chat_id="1001",
            turn_id=None,
            target=None,
            approval_status="pending",
        )
        await store.close()

    await seed()
    process, link = await _started(tmp_path)
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        landed = await asyncio.to_thread(_log_in, opener, link)
        assert "Pending approvals" in landed.read().decode()
        root = landed.geturl().rstrip("/")  # the pages' secret path prefix
        approvals = await asyncio.to_thread(
            lambda: opener.open(f"{root}/approvals", timeout=10).read().decode()
        )
        assert "Nothing waits for a decision." in approvals
    finally:
        await _stopped(process)
    with sqlite3.connect(tmp_path / "state.db") as db:
        (row,) = db.execute("SELECT approval_status, decided_by FROM invocations").fetchall()
    assert row == ("rejected", "restart")


async def test_dashboard_command_says_how_to_turn_it_on(bot: Bot) -> None:
    bot.telegram.inject_message(OWNER, "/dashboard")
    await delivered(bot.telegram, "[dashboard] enabled = true")
    assert "token=" not in str(bot.telegram.sent("sendMessage")[-1].params["text"])


async def test_augure_run_serves_it_when_enabled(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI
) -> None:
    env = environment(tmp_path) | bot_environment(tmp_path, telegram, llm)
    env |= {"AUGURE__DASHBOARD__ENABLED": "true", "AUGURE__DASHBOARD__PORT": "0"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "augure",
        "run",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        printed = ""
        while "token=" not in printed:
            printed = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().strip()
        telegram.inject_message(OWNER, "/dashboard")
        (call,) = await telegram.wait_for(
            lambda c: c.method == "sendMessage" and "token=" in str(c.params.get("text")),
            timeout=15,
        )
        sent = str(call.params["text"]).split()[-1]
        assert sent.split("?")[0] == printed.split("?")[0] and sent != printed
        for link in (printed, sent):  # each works once
            assert await asyncio.to_thread(_log_in_status, link) == 200
            assert await asyncio.to_thread(_log_in_status, link) == 401
    finally:
        await _stopped(process)
    log = (tmp_path / "logs" / "augure.log").read_text(encoding="utf-8")
    assert "dashboard serving on" in log and "token=" not in log


async def test_standalone_the_tasks_page_lists_and_offers_no_cancel(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    task_id = await Tasks(store.db).create("1001", "slow_job", {"name": "left"})
    await store.close()  # left `running` by a bot that stopped: no process runs it here
    process, link = await _started(tmp_path)
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        landed = await asyncio.to_thread(_log_in, opener, link)
        root = landed.geturl().rstrip("/")  # the pages' secret path prefix
        page = await asyncio.to_thread(
            lambda: opener.open(f"{root}/tasks", timeout=10).read().decode()
        )
    finally:
        await _stopped(process)
    assert f'id="task-{task_id}"' in page and "slow_job" in page
    assert "/cancel" not in page


async def test_with_no_bot_running_the_overview_says_the_scheduler_is_not_running(
    tmp_path: Path,
) -> None:
    """Alone, the dashboard runs no job: it must not claim "Scheduler: active"."""
    process, link = await _started(tmp_path)
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        page = await asyncio.to_thread(lambda: _log_in(opener, link).read().decode())
    finally:
        await _stopped(process)
    assert "Scheduler: active" not in page
    assert "Scheduler: not running" in page and "augure run" in page
