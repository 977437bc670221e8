"""Helpers shared by the end-to-end tests: waiting for what the bot sent, reading requests."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.e2e.conftest import OWNER, Bot
from tests.fakes.openai import FakeOpenAI
from tests.fakes.telegram import FakeTelegram

# What the model receives for a rejection (docs/reference/approvals.md#what-the-model-is-told),
# spelled out: the tests check the contract.
REJECTED = "Tool call rejected by user."
TIMED_OUT = "Tool call rejected: approval timed out."


async def approval_message(bot: Bot, count: int = 1) -> dict[str, Any]:
    """Wait for the count-th message carrying inline buttons; return it as stored now."""
    calls = await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and "reply_markup" in c.params, count=count
    )
    message_id = calls[count - 1].response["result"]["message_id"]
    (message,) = [m for m in bot.telegram.messages(OWNER) if m["message_id"] == message_id]
    return message


def buttons(message: dict[str, Any]) -> dict[str, str]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return {button["text"]: button["callback_data"] for row in rows for button in row}


def tool_results(llm: FakeOpenAI, request: int = -1) -> list[str]:
    return [m["content"] for m in llm.requests[request]["messages"] if m["role"] == "tool"]


def is_clock(message: dict[str, Any]) -> bool:
    """The time, sent just before the newest message of a turn (docs/prompt-economy.md)."""
    return str(message["content"]).startswith("[Now: ")


def this_turn(request: dict[str, Any]) -> list[Any]:
    """The owner's messages a request answers: those after the model's last answer (several
    when follow-ups were folded, docs/telegram.md)."""
    messages = request["messages"]
    answered = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    start = answered[-1] + 1 if answered else 0
    return [m["content"] for m in messages[start:] if m["role"] == "user" and not is_clock(m)]


SOURCES_LINE = re.compile(r"\n\n<i>from: [^<\n]+</i>")


def is_answer(sent: object, expected: str) -> bool:
    """`sent` is the answer `expected`, or it followed by the line naming the outside sources
    it drew on (docs/telegram.md, "Link previews, addresses and the sources line"), which
    tests/security/test_vulnerability_replies.py checks."""
    if not isinstance(sent, str) or not sent.startswith(expected):
        return False
    rest = sent[len(expected) :]
    return not rest or SOURCES_LINE.fullmatch(rest) is not None


async def final_reply(bot: Bot, expected: str) -> None:
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and is_answer(c.params.get("text"), expected),
        timeout=10,
    )


async def delivered(telegram: FakeTelegram, fragment: str, timeout: float = 10) -> None:
    await telegram.wait_for(
        lambda c: c.method == "sendMessage" and fragment in str(c.params.get("text")),
        timeout=timeout,
    )


async def hello(telegram: FakeTelegram) -> None:
    """The owner has talked to the bot before: Telegram lets a bot write only to such chats."""
    before = len(telegram.sent("sendMessage"))
    telegram.inject_message(OWNER, "/start")
    await telegram.wait_for("sendMessage", count=before + 1, timeout=20)


def environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("AUGURE", "OPENAI"))}
    keep.pop("TELEGRAM_BOT_TOKEN", None)
    return keep | {"AUGURE_HOME": str(home)} | (extra or {})


async def augure(
    *args: str, env: dict[str, str], stdin: str | None = None, timeout: float = 30
) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "augure",
        *args,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(
        process.communicate(stdin.encode() if stdin is not None else None), timeout
    )
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def publish(
    folder: Path, skills: dict[str, tuple[str, dict[str, str]]], tamper: frozenset[str] | set[str]
) -> None:
    """Write a skill hub in `folder`: each skill's files and a manifest with their sha256
    (signed wrongly for skill.py of the ids in `tamper`). `name: tea-timer` becomes the id."""
    entries = []
    for skill_id, (version, files) in skills.items():
        files = {n: c.replace("name: tea-timer", f"name: {skill_id}") for n, c in files.items()}
        (folder / "skills" / skill_id).mkdir(parents=True, exist_ok=True)
        hashes = {}
        for name, content in files.items():
            (folder / "skills" / skill_id / name).write_text(content, encoding="utf-8")
            signed = content + ("tampered" if skill_id in tamper and name == "skill.py" else "")
            hashes[name] = hashlib.sha256(signed.encode()).hexdigest()
        entries.append({"id": skill_id, "version": version, "description": "d", "files": hashes})
    (folder / "manifest.json").write_text(json.dumps({"skills": entries}), encoding="utf-8")


async def launch(env: dict[str, str]) -> asyncio.subprocess.Process:
    """A real `augure run` (with the test tools) in its own process."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.e2e.launcher", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def until(db: Path, query: str) -> None:
    """Wait until the database shows the state a crash must come after (a loaded machine
    may take a while to get there)."""
    for _ in range(600):
        with contextlib.closing(sqlite3.connect(db)) as connection:
            if connection.execute(query).fetchone():
                return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never reached: {query}")


async def start_dashboard(
    env: dict[str, str], timeout: float = 30, stderr: int = asyncio.subprocess.PIPE
) -> tuple[asyncio.subprocess.Process, str]:
    """`augure dashboard --port 0` with `env`, and the one-time login link it printed (by
    default its stderr is kept in a pipe, for what it must not say)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "augure", "dashboard", "--port", "0"),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
    )
    assert process.stdout is not None
    link = ""
    while "token=" not in link:
        link = (await asyncio.wait_for(process.stdout.readline(), timeout)).decode().strip()
        if not link and process.returncode is not None:
            raise RuntimeError("augure dashboard did not start")
    return process, link


def soon(seconds: float) -> str:
    """A job's `run_at` at least `seconds` from now, in the whole seconds ISO 8601 spells:
    rounded up, as cut off, 1 s ahead could already be past when the scheduler reads it."""
    due = datetime.now(UTC) + timedelta(seconds=seconds)
    return (due.replace(microsecond=0) + timedelta(seconds=1)).isoformat(timespec="seconds")
