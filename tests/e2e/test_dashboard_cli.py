"""`augure dashboard` from the command line: loopback only unless allowed, never beside a bot,
a login link printed once it serves."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import urllib.error
import urllib.request
from pathlib import Path

from augure.home import HomeLock
from tests.e2e.helpers import augure, environment


async def test_a_non_loopback_host_is_refused_in_one_line(tmp_path: Path) -> None:
    code, out, err = await augure("dashboard", "--host", "0.0.0.0", env=environment(tmp_path))
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [
        "augure: the dashboard binds only a loopback address, not '0.0.0.0'; "
        "set [dashboard] allow_remote = true to serve it beyond this machine"
    ]


async def test_it_refuses_while_a_bot_runs_on_the_home(tmp_path: Path) -> None:
    lock = HomeLock(tmp_path)
    lock.acquire()
    try:
        code, _, err = await augure("dashboard", env=environment(tmp_path))
    finally:
        lock.release()
    assert code == 1 and "[dashboard] enabled = true" in err and len(err.splitlines()) == 1


async def test_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code, _, err = await augure("dashboard", "--port", port, env=environment(tmp_path))
    assert code == 1 and "cannot listen on" in err and len(err.splitlines()) == 1


async def test_it_serves_and_prints_a_one_time_link(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "augure",
        "dashboard",
        "--port",
        "0",
        env=environment(tmp_path, {"OPENAI_API_KEY": "sk-x"}),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        link = ""
        while "token=" not in link:
            link = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().strip()
        root = link.split("/login")[0]
        assert root.startswith("http://127.0.0.1:")
        status = await asyncio.to_thread(_status, f"{root}/")
        assert status == 401
        assert await asyncio.to_thread(_status, link) == 200  # followed to the overview
        assert await asyncio.to_thread(_status, link) == 401  # spent
    finally:
        process.send_signal(signal.SIGINT)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 15)
    assert process.returncode == 0
    assert process.stderr is not None
    log = (await process.stderr.read()).decode()
    assert "token=" not in log and link.split("token=")[1] not in log


def _status(url: str) -> int:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    try:
        with opener.open(url, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code
