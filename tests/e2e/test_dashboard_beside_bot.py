"""`augure dashboard` beside a running `augure run` on the same home: the bot is a real process
holding the home, the dashboard another; what the dashboard decides reaches the bot through
state.db (as `augure approve` does), and the dashboard runs nothing of its own."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sqlite3
import sys
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, bot_environment
from tests.e2e.helpers import augure, delivered, environment, hello, launch, start_dashboard
from tests.fakes.openai import FakeOpenAI, text, tool
from tests.fakes.telegram import FakeTelegram

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
# A server the bot starts and keeps; the dashboard must start no copy of it (nor anything else).
HUNG_SERVER = (
    "[mcp.servers.hung]\n"
    f"command = {json.dumps(sys.executable)}\n"
    'args = ["-c", "import time; time.sleep(600)"]\n'
)


@dataclass
class Session:
    """A browser logged in to the dashboard: its cookie, its pages' root, its CSRF token."""

    opener: urllib.request.OpenerDirector
    root: str  # scheme, host, port and the secret path prefix

    @classmethod
    async def log_in(cls, link: str) -> Session:
        """As the owner does: open the link, then press its page's Log in button (a POST of
        the token from the dashboard's own page; the GET alone spends nothing)."""
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        root, token = link.split("/login?token=")
        form = urllib.parse.urlencode({"token": token}).encode()
        request = urllib.request.Request(f"{root}/login", data=form, headers={"Origin": root})
        landed = await asyncio.to_thread(lambda: opener.open(request, timeout=10))
        return cls(opener, landed.geturl().rstrip("/"))

    async def get(self, path: str) -> str:
        return await asyncio.to_thread(
            lambda: self.opener.open(self.root + path, timeout=10).read().decode()
        )

    async def post(self, path: str, csrf_from: str) -> str:
        """Submit a form as the dashboard's own page does; the page it lands on."""
        match = CSRF.search(await self.get(csrf_from))
        assert match is not None, f"no form on {csrf_from}"
        origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(self.root))
        request = urllib.request.Request(
            self.root + path,
            data=urllib.parse.urlencode({"csrf": match.group(1)}).encode(),
            headers={"Origin": origin},
            method="POST",
        )
        return await asyncio.to_thread(
            lambda: self.opener.open(request, timeout=10).read().decode()
        )


@dataclass
class Beside:
    home: Path
    env: dict[str, str]
    telegram: FakeTelegram
    llm: FakeOpenAI
    bot: asyncio.subprocess.Process
    dashboard: asyncio.subprocess.Process | None = None
    session: Session | None = None

    async def open_dashboard(self) -> Session:
        self.dashboard, link = await start_dashboard(self.env, stderr=asyncio.subprocess.DEVNULL)
        self.session = await Session.log_in(link)
        return self.session


async def _stopped(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.send_signal(signal.SIGINT)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 15)
    if process.returncode is None:
        process.kill()
        await process.wait()


@pytest.fixture
def config_file() -> str:
    return ""


@pytest.fixture
async def beside(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, config_file: str
) -> AsyncIterator[Beside]:
    test_tools.reset()
    home = tmp_path / "home"
    home.mkdir()
    (home / "augure.toml").write_text(config_file, encoding="utf-8")
    env = environment(home, bot_environment(home, telegram, llm))
    # Long enough for the dashboard to start while a request waits.
    env["AUGURE__APPROVAL__TIMEOUT_SECONDS"] = "120"
    bot = await launch(env)
    running = Beside(home, env, telegram, llm, bot)
    try:
        await telegram.wait_polling(timeout=30)
        yield running
    finally:
        if running.dashboard is not None:
            await _stopped(running.dashboard)
        await _stopped(bot)


async def test_an_approval_from_the_dashboard_runs_the_call_in_the_bot(beside: Beside) -> None:
    beside.llm.script(tool("send_note", {"to": "alice", "text": "hi"}), text("Sent it."))
    beside.telegram.inject_message(OWNER, "tell alice hi")
    await beside.telegram.wait_for(
        lambda c: c.method == "sendMessage" and "reply_markup" in c.params, timeout=20
    )
    # The request already waits when the dashboard starts: it must stay pending for it.
    session = await beside.open_dashboard()
    (invocation_id,) = _pending(beside.home)
    await session.post(f"/approvals/{invocation_id}/approve", csrf_from="/approvals")

    await beside.telegram.wait_for(
        lambda c: c.method == "sendMessage" and c.params.get("text") == "Sent it.", timeout=20
    )
    assert test_tools.outbox(beside.home) == [{"to": "alice", "text": "hi"}]
    (request,) = [m for m in beside.telegram.messages(OWNER) if "send_note" in m["text"]]
    assert "Approved" in request["text"] and not request.get("reply_markup")
    with contextlib.closing(sqlite3.connect(beside.home / "state.db")) as db:
        row = db.execute(
            "SELECT approval_status, decided_by, status FROM invocations WHERE id = ?",
            (invocation_id,),
        ).fetchone()
    assert row == ("approved", "dashboard", "completed")
    code, out, _ = await augure("status", env=beside.env)  # the bot still holds its home
    assert code == 0 and f"pid {beside.bot.pid}" in out


async def test_run_now_from_the_dashboard_runs_the_job_in_the_bot(beside: Beside) -> None:
    await hello(beside.telegram)
    code, _, err = await augure(
        *("jobs", "add", "--cron", "0 9 1 1 *", "--prompt", "say the word", "--id", "word"),
        env=beside.env,
    )
    assert code == 0, err
    session = await beside.open_dashboard()
    beside.llm.script(text("The word is heron."))
    await session.post("/jobs/word/run", csrf_from="/jobs")
    await delivered(beside.telegram, "The word is heron.", timeout=20)


async def test_cancel_beside_the_bot_is_refused_in_one_line(beside: Beside) -> None:
    beside.llm.script(tool("slow_job", {"name": "sync", "background": True}), text("Started."))
    beside.telegram.inject_message(OWNER, "sync in the background")
    await beside.telegram.wait_for(
        lambda c: c.method == "sendMessage" and c.params.get("text") == "Started.", timeout=20
    )
    with contextlib.closing(sqlite3.connect(beside.home / "state.db")) as db:
        (task_id,) = db.execute("SELECT id FROM tasks WHERE status = 'running'").fetchone()
    session = await beside.open_dashboard()
    page = await session.get("/tasks")
    assert f'id="task-{task_id}"' in page and "/cancel" not in page
    assert "cancel it in Telegram with /tasks" in page
    landed = await session.post(f"/tasks/{task_id}/cancel", csrf_from="/tasks")
    assert "That task runs in the bot: cancel it in Telegram with /tasks." in landed
    with contextlib.closing(sqlite3.connect(beside.home / "state.db")) as db:
        (status,) = db.execute("SELECT status FROM tasks WHERE id = ?", (task_id,)).fetchone()
    assert status == "running"


@pytest.mark.parametrize("config_file", [HUNG_SERVER], ids=["mcp-server"])
async def test_the_dashboard_starts_no_process_of_its_own(beside: Beside) -> None:
    for _ in range(200):  # the bot starts its MCP server in the background
        if _children(beside.bot.pid):
            break
        await asyncio.sleep(0.05)
    assert _children(beside.bot.pid)
    session = await beside.open_dashboard()
    assert beside.dashboard is not None
    await session.get("/")
    # MCP servers start in the background once the core is built: give them the time the
    # bot's took, and more, before looking.
    for _ in range(20):
        assert _children(beside.dashboard.pid) == []
        await asyncio.sleep(0.1)


def _pending(home: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(home / "state.db")) as db:
        rows = db.execute("SELECT id FROM invocations WHERE approval_status = 'pending'")
        return [row[0] for row in rows]


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # The fields after the command's name (in brackets, which may hold spaces).
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.parent.name))
    return found
