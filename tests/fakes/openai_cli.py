"""The fake OpenAI-compatible server for a person: ``python -m tests.fakes.openai --port 8082``.

With no script it echoes: the answer to a user's message is ``echo: <message>``, and after a
tool ran, ``tool said: <its result>``. ``--script FILE`` plays FILE's replies first, one per
chat completion, in order, then echoes. A script has one reply a line (blank lines and lines
starting with ``#`` are skipped)::

    Hello! This line is a plain text answer.
    {"text": "The same, as JSON"}
    {"tool": "remember", "arguments": {"fact": "likes tea"}}
    {"tools": [{"tool": "web_search", "arguments": {"query": "tea"}}], "text": "Looking"}
    {"error": 429, "message": "slow down"}

Every request and reply is printed, one line each. docs/development.md shows how to point
the bot at it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TextIO

from tests.fakes.openai import FakeOpenAI, Reply, ToolCall, error, text, tool, tools
from tests.fakes.server import serve


class ScriptError(ValueError):
    pass


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.openai", description=__doc__)
    parser.add_argument("--port", type=int, default=8082)
    parser.add_argument("--script", type=Path, help="replies to play before echoing")
    return parser.parse_args(argv)


def reply_of(line: str) -> Reply:
    """One script line as a reply: JSON when it is a JSON object, else the text itself."""
    try:
        entry = json.loads(line)
    except ValueError:
        return text(line)
    if not isinstance(entry, dict):
        return text(line)
    if "error" in entry:
        return error(int(entry["error"]), entry.get("message", "scripted error"))
    if "tool" in entry:
        return tool(entry["tool"], entry.get("arguments", {}))
    if "tools" in entry:
        calls = [ToolCall(c["tool"], c.get("arguments", {})) for c in entry["tools"]]
        return tools(*calls, text=entry.get("text"))
    if "text" in entry:
        return text(entry["text"])
    raise ScriptError(f"a script line needs text, tool, tools or error: {line}")


def read_script(path: Path) -> list[Reply]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [reply_of(line) for line in lines if line.strip() and not line.startswith("#")]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def echo(body: dict[str, Any]) -> Reply:
    """What the model says when nothing is scripted: the last message, given back."""
    last = (body.get("messages") or [{}])[-1]
    if last.get("role") == "tool":
        return text(f"tool said: {_content(last)[:500]}")
    return text(f"echo: {_content(last)}")


def described(reply: Reply) -> str:
    if reply.status != 200:
        return f"error {reply.status}: {reply.error_message}"
    calls = [f"{c.name}({c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)})"
             for c in reply.tool_calls]  # fmt: skip
    return " ".join(filter(None, [reply.text, *calls]))


def watch(fake: FakeOpenAI, out: TextIO) -> Callable[[], Coroutine[Any, Any, None]]:
    """Make `fake` echo once its script is played; returns the task that prints each
    request's last message (and each echo after the request it answers)."""
    printed = 0

    def print_requests() -> None:
        nonlocal printed
        for body in fake.requests[printed:]:
            last = (body.get("messages") or [{}])[-1]
            print(f"model< {last.get('role')}: {_content(last)[:200]}", file=out, flush=True)
        printed = len(fake.requests)

    def respond(body: dict[str, Any]) -> Reply:
        reply = echo(body)
        print_requests()
        print(f"model> {described(reply)}", file=out, flush=True)
        return reply

    async def show_requests() -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await fake.wait_requests(printed + 1, timeout=3600)
            print_requests()

    fake.responder = respond
    return show_requests


async def run(argv: list[str] | None = None, out: TextIO = sys.stdout) -> None:
    chosen = options(argv)
    fake = FakeOpenAI()
    if chosen.script is not None:
        fake.script(*read_script(chosen.script))
    show_requests = watch(fake, out)

    async def console() -> None:
        print(f"fake OpenAI-compatible API on {fake.base_url}", file=out, flush=True)
        await show_requests()

    await serve(fake, chosen.port, console)


def main(argv: list[str] | None = None) -> None:
    asyncio.run(run(argv))
