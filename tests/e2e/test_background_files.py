"""Files a background task produced reach its chat with its report, like a turn's files."""

from __future__ import annotations

import asyncio

import pytest

from augure.tools.base import Artifact, RunContext, ToolResult
from augure.tools.base import tool as tool_of
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import final_reply
from tests.fakes.openai import text, tool

# The 8-byte PNG signature and an IHDR chunk: enough for Telegram (and its fake) to take it.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"


@tool_of("snapshot", background=True)
async def snapshot(ctx: RunContext, page: str) -> ToolResult:
    """Take a screenshot of a page and save its text (a long job)."""
    await asyncio.sleep(0)
    return ToolResult.ok(
        f"Took a screenshot of {page}.",
        [Artifact("image", "page.png", PNG), Artifact("file", "page.txt", f"text of {page}")],
    )


pytestmark = pytest.mark.tools(*test_tools.TEST_TOOLS, snapshot, reset=test_tools.reset)


async def test_a_background_tasks_files_are_delivered_after_its_report(bot: Bot) -> None:
    bot.llm.script(
        tool("snapshot", {"page": "example.com", "background": True}),
        text("Started."),
        text("Here is the screenshot of example.com."),
    )
    bot.telegram.inject_message(OWNER, "screenshot example.com in the background")
    await final_reply(bot, "Started.")
    await final_reply(bot, "Here is the screenshot of example.com.")
    (photo,) = await bot.telegram.wait_for("sendPhoto")
    await bot.telegram.wait_for("sendDocument")
    assert str(photo.params["chat_id"]) == str(OWNER) and photo.params["caption"] == "page.png"
    shown = bot.telegram.messages(OWNER)
    texts = [m.get("text") for m in shown]
    report = texts.index("Here is the screenshot of example.com.")
    kinds = ["photo" if "photo" in m else "document" if "document" in m else "text" for m in shown]
    assert kinds[report + 1 :] == ["photo", "document"]  # the files follow the report
    assert shown[-1]["document_bytes"] == b"text of example.com"
    assert shown[-1]["document_name"] == "page.txt"
