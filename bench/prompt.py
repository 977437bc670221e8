"""The first model request of a conversation, counted with a real tokenizer (cl100k_base).

Run: `python -m bench.prompt` from the repository root, after `pip install -e '.[dev]'`.
A real `augure run` process, with every built-in tool configured (search key, GitHub token,
mailbox, coding agent; bubblewrap and Chromium as installed), answers the owner's first
message behind the test fakes; the request the scripted model server received is counted:
its messages and its tool schemas as the compact JSON the SDK sent. Prints the total, each
system prompt section and each tool schema, each figure with its ratio to the previous run.
Every tool of the orchestration wave is there: `batch`, `task` (one subagent configured),
the `background` flag, and `task_status`/`task_cancel` as deferred lines.

The tokenizer never downloads: cl100k_base is read from a provisioned tiktoken cache
(`TIKTOKEN_CACHE_DIR`), checked against the encoding's published sha256 by tiktoken itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol

from bench.common import environment, report, spawn, stop
from tests.e2e.conftest import OWNER
from tests.fakes.openai import FakeOpenAI, text
from tests.fakes.telegram import FakeTelegram

FIRST_MESSAGE = "What's on my calendar tomorrow?"
TARGET_TOKENS = 1500  # issue 16: with every tool of the orchestration wave available
CL100K_SOURCE = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"

# Every built-in tool configured, so none carries a `[NOT CONFIGURED]` suffix. Placeholder
# values: nothing is contacted, only the first request is looked at.
CONFIGURED = {
    "TAVILY_API_KEY": "tvly-bench-placeholder",
    "GITHUB_TOKEN": "ghp_bench_placeholder",
    "AUGURE__TOOLS__EMAIL__IMAP_HOST": "imap.example.org",
    "AUGURE__TOOLS__EMAIL__SMTP_HOST": "smtp.example.org",
    "AUGURE__TOOLS__EMAIL__USERNAME": "owner@example.org",
    "AUGURE__TOOLS__EMAIL__PASSWORD": "bench-placeholder",
    "AUGURE__TOOLS__OPENCODE__COMMAND": "opencode run",
    # One subagent, so the `task` tool is offered too (issue 16: every tool of the wave).
    "AUGURE__AGENTS__RESEARCHER__INSTRUCTIONS": "Research a question on the web; cite sources.",
}


class Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


def cl100k() -> Encoding:
    """cl100k_base from a provisioned cache; never the net."""
    how = (
        "cl100k_base is not available offline: provision a tiktoken cache: run "
        "`python -c \"import tiktoken; tiktoken.get_encoding('cl100k_base')\"` once with "
        "TIKTOKEN_CACHE_DIR set, on a machine with network, and set it here too"
    )
    try:
        import tiktoken
    except ImportError:
        raise SystemExit(f"tiktoken is not installed. {how}") from None
    cache = os.environ.get("TIKTOKEN_CACHE_DIR")
    if cache and (Path(cache) / hashlib.sha1(CL100K_SOURCE.encode()).hexdigest()).is_file():
        return tiktoken.get_encoding("cl100k_base")
    raise SystemExit(how)


async def first_request() -> dict[str, Any]:
    """The request `augure run` sends the model for the owner's first message."""
    with tempfile.TemporaryDirectory() as directory:
        async with FakeTelegram() as telegram, FakeOpenAI() as llm:
            llm.responder = lambda request: text("ok")
            env = environment(Path(directory) / "home", telegram, llm) | CONFIGURED
            process = await spawn(env)
            try:
                await telegram.wait_polling(timeout=20)
                telegram.inject_message(OWNER, FIRST_MESSAGE)
                await telegram.wait_for("sendMessage", timeout=20)
            finally:
                await stop(process)
            return llm.requests[0]


def sections(system: str) -> list[tuple[str, str]]:
    """The system prompt's parts: the fixed instructions, then each `# Heading` section."""
    parts = system.split("\n\n# ")
    named = [("instructions", parts[0])]
    for part in parts[1:]:
        heading = part.split("\n", 1)[0].split(" (", 1)[0]
        named.append((heading, "# " + part))
    return named


def as_sent(value: Any) -> str:
    """JSON the way the openai SDK puts it in the request body."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def request_tokens(encoding: Encoding, request: dict[str, Any]) -> int:
    """The messages and the tool schemas (not the model name and stream flags)."""
    body = as_sent(request["messages"]) + as_sent(request.get("tools", []))
    return len(encoding.encode_ordinary(body))


def main() -> None:
    encoding = cl100k()
    request = asyncio.run(first_request())
    count = encoding.encode_ordinary
    messages = request["messages"]
    tools = request.get("tools", [])

    print(f"first model request (cl100k_base tokens), owner's message {FIRST_MESSAGE!r}:")
    print("system prompt:")
    for name, part in sections(messages[0]["content"]):
        print(f"  {len(count(part)):>5}  {name}")
    print(f"  {len(count(messages[-1]['content'])):>5}  (the owner's message)")
    print("tool schemas:")
    for schema in sorted(tools, key=lambda s: -len(count(as_sent(s)))):
        print(f"  {len(count(as_sent(schema))):>5}  {schema['function']['name']}")
    listed = [part for name, part in sections(messages[0]["content"]) if name == "More tools"]
    if listed:
        names = [line[2:].split(":", 1)[0] for line in listed[0].splitlines()[1:]]
        print(f"deferred (one line each until load_tools): {', '.join(names)}")

    figures = {
        "system prompt": (float(len(count(as_sent(messages[:1])))), "tokens"),
        "tool schemas": (float(len(count(as_sent(tools)))), "tokens"),
        "first request": (float(request_tokens(encoding, request)), "tokens"),
    }
    report("prompt", figures)
    total = request_tokens(encoding, request)
    verdict = "met" if total <= TARGET_TOKENS else "NOT met"
    print(f"first request: {total} tokens; target <= {TARGET_TOKENS}: {verdict}")


if __name__ == "__main__":
    main()
