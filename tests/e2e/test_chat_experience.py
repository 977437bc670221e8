"""What the owner sees in Telegram: streaming, media in and out, compaction, /usage."""

from __future__ import annotations

import base64
import struct
import time
import zlib
from typing import Any

import pytest

from augure.agent.history import SUMMARY_PROMPT
from augure.tools.base import Artifact, Egress, RunContext, ToolResult, tool
from tests.e2e.conftest import OWNER, Bot
from tests.fakes.openai import Reply, ToolCall, text
from tests.fakes.telegram import FakeTelegram


def png(width: int = 4, height: int = 3) -> bytes:
    """A real (tiny) PNG: Telegram, and the fake, refuse bytes that are not an image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@tool("snap", egress=Egress.READ_ONLY)
async def snap(ctx: RunContext) -> ToolResult:
    """Returns a picture and a report file."""
    return ToolResult.ok(
        "Made a picture and a report.",
        [Artifact("image", "chart.png", png()), Artifact("file", "report.csv", "a,b\n1,2\n")],
    )


@tool("padding", egress=Egress.READ_ONLY)
async def padding(ctx: RunContext, n: int) -> str:
    """Returns a longish text."""
    return f"result {n}: " + "lorem ipsum " * 170


pytestmark = pytest.mark.tools(snap, padding)


def edits(telegram: FakeTelegram) -> int:
    return len(telegram.sent("editMessageText"))


async def test_a_streamed_answer_is_one_message_edited_at_most_once_a_second(bot: Bot) -> None:
    answer = " ".join(f"word{n}" for n in range(500))
    bot.llm.script(text(answer, chunk_size=25, chunk_delay=0.02))
    started = time.monotonic()
    bot.telegram.inject_message(OWNER, "tell me a long story")
    await bot.telegram.wait_for(
        lambda c: c.method == "editMessageText" and c.params.get("parse_mode") == "HTML",
        timeout=15,
    )
    elapsed = time.monotonic() - started
    await bot.telegram.wait_idle(quiet=0.5)
    (message,) = bot.telegram.messages(OWNER)
    assert message["text"] == answer and message["parse_mode"] == "HTML"
    assert 2 <= edits(bot.telegram) <= elapsed + 2  # previews at ≥1 s intervals, then final
    assert len(bot.telegram.sent("sendMessage")) == 1


async def test_a_quick_answer_is_one_formatted_message_without_edits(bot: Bot) -> None:
    bot.llm.script(text("Quick **answer**."))
    bot.telegram.inject_message(OWNER, "quick?")
    await bot.telegram.wait_for("sendMessage")
    await bot.telegram.wait_idle(quiet=0.3)
    assert edits(bot.telegram) == 0
    (message,) = bot.telegram.messages(OWNER)
    assert message["raw_text"] == "Quick <b>answer</b>."


async def test_a_quick_answer_queued_behind_a_slow_turn_is_still_one_message(bot: Bot) -> None:
    # The second turn waits for the first (one chat's turns run in order); the preview's
    # second is counted from its first words, not from when the message arrived.
    bot.llm.script(text("First **answer**.", delay=1.5), text("Second **answer**."))
    bot.telegram.inject_message(OWNER, "slow one")
    await bot.llm.wait_requests(1)
    bot.telegram.inject_message(OWNER, "quick one")
    await bot.telegram.wait_for("sendMessage", count=2, timeout=15)
    await bot.telegram.wait_idle(quiet=0.5)
    assert edits(bot.telegram) == 0
    first, second = bot.telegram.messages(OWNER)
    assert (first["raw_text"], second["raw_text"]) == (
        "First <b>answer</b>.",
        "Second <b>answer</b>.",
    )


async def test_flood_control_while_streaming_delays_but_never_duplicates(bot: Bot) -> None:
    bot.telegram.plan_error("editMessageText", 429, retry_after=1)
    answer = " ".join(f"token{n}" for n in range(400))
    bot.llm.script(text(answer, chunk_size=20, chunk_delay=0.02))
    bot.telegram.inject_message(OWNER, "stream with a hiccup")
    await bot.telegram.wait_for(
        lambda c: c.method == "editMessageText" and c.params.get("parse_mode") == "HTML",
        timeout=20,
    )
    await bot.telegram.wait_idle(quiet=0.5)
    refused = [c for c in bot.telegram.calls if c.status == 429]
    assert len(refused) == 1
    (message,) = bot.telegram.messages(OWNER)
    assert message["text"] == answer
    assert len(bot.telegram.sent("sendMessage")) == 1


async def test_an_answer_crossing_4096_characters_mid_stream(bot: Bot) -> None:
    paragraphs = [f"Paragraph {n}. " + "x" * 280 for n in range(22)]
    answer = "\n\n".join(paragraphs)
    assert len(answer) > 6000
    bot.llm.script(text(answer, chunk_size=150, chunk_delay=0.05))
    bot.telegram.inject_message(OWNER, "very long please")
    await bot.telegram.wait_for("sendMessage", count=2, timeout=20)
    await bot.telegram.wait_idle(quiet=0.5)
    first, second = bot.telegram.messages(OWNER)
    assert first["edits"] >= 1  # the preview became part one
    assert first["parse_mode"] == second["parse_mode"] == "HTML"
    delivered = first["text"] + "\n\n" + second["text"]
    assert delivered == answer


def not_modified(telegram: FakeTelegram) -> int:
    return sum(
        1
        for call in telegram.calls
        if "message is not modified" in str(call.response.get("description", ""))
    )


async def test_a_streamed_conversation_never_edits_a_message_to_what_it_shows(bot: Bot) -> None:
    # The whole answer is shown by the first preview, then the stream stays open: the final
    # formatted text is the same as the preview, so no edit is due.
    bot.llm.script(text("Plain words, nothing to format.", chunk_size=100, chunk_delay=0.8))
    bot.telegram.inject_message(OWNER, "first")
    await bot.telegram.wait_for("sendMessage", timeout=15)
    await bot.telegram.wait_idle(quiet=1.0)
    # A preview that only grew by blank lines looks the same in Telegram, which trims them.
    answer = "Plain words only." + "\n" * 17 + "More words here.."
    bot.llm.script(text(answer, chunk_size=17, chunk_delay=1.2))
    bot.telegram.inject_message(OWNER, "second")
    await bot.telegram.wait_for("sendMessage", count=2, timeout=20)
    await bot.telegram.wait_for(
        lambda c: c.method == "editMessageText" and c.params.get("parse_mode") == "HTML",
        timeout=20,
    )
    await bot.telegram.wait_idle(quiet=1.0)
    first, second = bot.telegram.messages(OWNER)
    assert first["text"] == "Plain words, nothing to format."
    assert second["text"] == "Plain words only.\n\nMore words here.."
    assert not_modified(bot.telegram) == 0


async def test_a_photo_reaches_the_model_as_an_image_this_turn_only(bot: Bot) -> None:
    picture = png()
    bot.llm.script(text("A red square."), text("You sent a red square."))
    bot.telegram.inject_message(OWNER, photo=picture, caption="What is this?")
    await bot.telegram.wait_for("sendMessage", timeout=10)
    content = bot.llm.requests[0]["messages"][-1]["content"]
    assert content[0]["type"] == "text" and content[0]["text"].startswith("What is this?")
    url = content[1]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == picture
    assert [p.read_bytes() for p in (bot.home / "inbox").iterdir()] == [picture]

    bot.telegram.inject_message(OWNER, "and before?")
    await bot.telegram.wait_for("sendMessage", count=2, timeout=10)
    earlier = bot.llm.requests[1]["messages"][1]["content"]
    assert isinstance(earlier, str) and "What is this?" in earlier and "[image]" in earlier


async def test_a_model_without_vision_gets_a_note_instead(bot: Bot) -> None:
    bot.llm.script(Reply(status=400, error_message="model does not support images"))
    bot.llm.script(text("I cannot see pictures, sorry."))
    bot.telegram.inject_message(OWNER, photo=png(), caption="look")
    await bot.telegram.wait_for("sendMessage", timeout=10)
    retried = bot.llm.requests[-1]["messages"][-1]["content"]
    assert "cannot see images" in retried
    assert bot.telegram.messages(OWNER)[0]["text"] == "I cannot see pictures, sorry."


async def test_a_document_is_saved_in_the_inbox_under_a_safe_name(bot: Bot) -> None:
    bot.llm.script(text("Got your notes."))
    bot.telegram.inject_message(OWNER, document=("../../evil notes.txt", b"hello notes"))
    await bot.telegram.wait_for("sendMessage", timeout=10)
    (saved,) = (bot.home / "inbox").iterdir()
    assert saved.read_bytes() == b"hello notes"
    assert saved.name.endswith("-evil_notes.txt") and ".." not in saved.name
    told = bot.llm.requests[0]["messages"][-1]["content"]
    assert f"inbox/{saved.name}" in told and "11 bytes" in told
    assert not (bot.home.parent / "evil notes.txt").exists()


async def test_a_voice_note_is_transcribed_and_answered(bot: Bot) -> None:
    await bot.stop()
    bot.extra_env = {"AUGURE__LLM__TRANSCRIPTION_MODEL": "whisper-1"}
    await bot.start()
    bot.llm.transcription_text = "remind me to call the bank"
    bot.llm.script(text("Noted: call the bank."))
    bot.telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
    await bot.telegram.wait_for("sendMessage", timeout=10)
    (transcription,) = bot.llm.transcriptions
    assert (
        transcription["model"] == "whisper-1" and transcription["bytes"] == b"OggS fake opus bytes"
    )
    asked = bot.llm.requests[0]["messages"][-1]["content"]
    assert asked == "[Voice note, transcribed]: remind me to call the bank"


async def test_a_voice_note_without_a_transcription_model_says_what_to_set(bot: Bot) -> None:
    bot.telegram.inject_message(OWNER, voice=b"OggS")
    await bot.telegram.wait_for("sendMessage", timeout=10)
    assert "[llm] transcription_model" in bot.telegram.messages(OWNER)[0]["text"]
    assert bot.llm.requests == []


async def test_artifacts_come_back_as_a_photo_and_a_document(bot: Bot) -> None:
    bot.llm.script(
        Reply(tool_calls=[ToolCall("snap", {})]),
        text("Here they are."),
    )
    bot.telegram.inject_message(OWNER, "make me a chart")
    await bot.telegram.wait_for("sendDocument", timeout=10)
    photo = [m for m in bot.telegram.messages(OWNER) if "photo_bytes" in m]
    document = [m for m in bot.telegram.messages(OWNER) if "document_bytes" in m]
    assert photo[0]["photo_bytes"] == png() and photo[0]["caption"] == "chart.png"
    assert document[0]["document_bytes"] == b"a,b\n1,2\n"
    assert document[0]["document_name"] == "report.csv"


def assert_pairs(messages: list[dict[str, Any]]) -> None:
    """Every tool result follows the call it answers, and every call has its result."""
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, "a tool result without its call"
            open_calls.discard(message["tool_call_id"])
        else:
            assert not open_calls, "a tool call without its result"
        if message["role"] == "assistant":
            open_calls = {call["id"] for call in message.get("tool_calls") or []}
    assert not open_calls


async def test_compaction_shortens_then_summarises_and_keeps_tool_pairs(bot: Bot) -> None:
    await bot.stop()
    bot.extra_env = {"AUGURE__AGENT__HISTORY_TOKENS": "1000"}
    await bot.start()
    turns = {"n": 0}

    def respond(request: dict[str, Any]) -> Reply:
        messages = request["messages"]
        if messages[0]["content"] == SUMMARY_PROMPT:
            return text("SUMMARY: the owner asked for padded results several times.")
        if messages[-1]["role"] == "user":
            turns["n"] += 1
            return Reply(tool_calls=[ToolCall("padding", {"n": turns["n"]})])
        return text(f"done {turns['n']}")

    bot.llm.responder = respond
    for n in range(1, 9):
        bot.telegram.inject_message(OWNER, f"question {n}")
        await bot.telegram.wait_for(
            lambda c, n=n: c.method == "sendMessage" and c.params.get("text") == f"done {n}",
            timeout=15,
        )
    chat_requests = [r for r in bot.llm.requests if r["messages"][0]["content"] != SUMMARY_PROMPT]
    for request in chat_requests:
        assert_pairs(request["messages"][1:])
    flat = str(bot.llm.requests)
    assert "[shortened from" in flat
    summaries = [r for r in bot.llm.requests if r["messages"][0]["content"] == SUMMARY_PROMPT]
    assert summaries, "the history never reached the point of summarising"
    last = chat_requests[-1]["messages"]
    assert last[1]["role"] == "system" and "SUMMARY:" in last[1]["content"]
    assert bot.core is not None
    stored = await bot.core.store.messages(await bot.core.store.open_conversation(str(OWNER)))
    assert_pairs([m for m in stored if m["role"] != "system"])


async def test_usage_reports_what_was_recorded(bot: Bot) -> None:
    await bot.stop()
    bot.extra_env = {
        "AUGURE__LLM__INPUT_PRICE_PER_MILLION": "1",
        "AUGURE__LLM__OUTPUT_PRICE_PER_MILLION": "2",
    }
    await bot.start()
    bot.llm.script(text("ok", usage=(1234, 56)))
    bot.telegram.inject_message(OWNER, "hi")
    await bot.telegram.wait_for("sendMessage")
    bot.telegram.inject_message(OWNER, "/usage")
    await bot.telegram.wait_for("sendMessage", count=2)
    report = bot.telegram.messages(OWNER)[-1]["text"]
    assert "1234 in + 56 out tokens, ≈ $0.0013" in report
    assert "Today: 1234 in + 56 out in 1 turn(s)" in report
    assert "Total: 1234 in + 56 out in 1 turn(s)" in report
    for part in ("system prompt", "memory", "tool schemas", "history", "output"):
        assert part in report


async def test_memory_command_and_the_registered_menu(bot: Bot) -> None:
    bot.telegram.inject_message(OWNER, "/memory")
    await bot.telegram.wait_for("sendMessage")
    assert "identity.md" in bot.telegram.messages(OWNER)[0]["text"]
    await bot.telegram.wait_for("setMyCommands")
    registered = {c["command"] for c in bot.telegram.commands}
    assert registered == {
        "start", "help", "new", "status", "approvals", "usage", "memory", "jobs", "pause",
        "resume", "skills", "persona", "tasks", "dashboard",
    }  # fmt: skip
