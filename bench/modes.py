"""Model calls for a five-step task: standard tool calling versus code mode.

The task: save five notes, each step using the previous one's result (so a model cannot
batch them into one response). A scripted model behaves as a real one would in each mode —
one tool call per response in standard mode, one snippet in code mode — and the real agent
runs the turn against the scripted OpenAI-compatible server. Prints, per mode, the model
calls and the characters sent to the model in total (what the provider bills).

Run: `python -m bench.modes` from the repository root.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from augure.config.settings import load_config
from augure.core.lifespan import Augure
from tests.fakes.openai import FakeOpenAI, Reply, ToolCall, text

STEPS = 5
SNIPPET = "\n".join(
    [
        "previous = 'start'",
        f"for n in range({STEPS}):",
        "    saved = api.memory_write(path=f'step{n}.md', content=f'after {previous}')",
        "    previous = saved",
        "print(previous)",
    ]
)


def standard(request: dict[str, Any]) -> Reply:
    done = sum(1 for m in request["messages"] if m["role"] == "tool")
    if done < STEPS:
        content = f"after step {done - 1}" if done else "start"
        return Reply(tool_calls=[ToolCall("memory_write", {"path": f"step{done}.md",
                                                           "content": content})])  # fmt: skip
    return text("Saved all five notes.")


def code(request: dict[str, Any]) -> Reply:
    if any(m["role"] == "tool" for m in request["messages"]):
        return text("Saved all five notes.")
    return Reply(tool_calls=[ToolCall("execute_code", {"code": SNIPPET})])


async def run(mode: str) -> tuple[int, int]:
    async with FakeOpenAI() as llm:
        llm.responder = standard if mode == "standard" else code
        with tempfile.TemporaryDirectory() as directory:
            os.environ.update(
                OPENAI_BASE_URL=llm.base_url,
                OPENAI_API_KEY="bench",
                AUGURE__CODE_MODE__ENABLED="true" if mode == "code" else "false",
            )
            async with Augure.running(load_config(home=Path(directory))) as door:
                await door.chat.converse("bench", "Save five chained notes.")
        return len(llm.requests), sum(len(json.dumps(r)) for r in llm.requests)


async def main() -> None:
    for mode in ("standard", "code"):
        calls, chars = await run(mode)
        print(f"{mode:>8} mode: {calls} model calls, {chars} characters sent "
              f"(~{chars // 4} tokens) for a {STEPS}-step task")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
