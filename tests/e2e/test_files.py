"""The `files` tool (docs/reference/tools.md#files): the owner's documents in inbox/, the chat's
sandbox workspace, reads of text and PDFs, sending back as photo or document, and paths that cannot
leave."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, cast

import pytest

from augure.common.caller import Caller
from augure.config.settings import load_config
from augure.memory.store import MemoryStore
from augure.sandbox import workspace_name
from augure.tools.base import RunContext, ToolResult
from augure.tools.files import READ_LIMIT, files
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import approval_message, buttons, final_reply, tool_results
from tests.fakes.openai import Reply, text, tool

NOTE = b"The spare key is under the blue flower pot."
# A 2x2 PNG, written by Python inside the sandbox: the file the model made there.
MAKE_PNG = (
    'python3 -c "import zlib, struct as s\n'
    "c = lambda k, d: s.pack('>I', len(d)) + k + d + s.pack('>I', zlib.crc32(k + d))\n"
    "rows = (b'\\\\0' + b'\\\\xff' * 6) * 2\n"
    "open('chart.png', 'wb').write(b'\\\\x89PNG\\\\r\\\\n\\\\x1a\\\\n'"
    " + c(b'IHDR', s.pack('>IIBBBBB', 2, 2, 8, 2, 0, 0, 0))"
    " + c(b'IDAT', zlib.compress(rows)) + c(b'IEND', b''))\""
)


@pytest.mark.system_package("bubblewrap")
async def test_owner_sends_a_document_the_model_reads_it_and_sends_back_a_workspace_file(
    bot: Bot,
) -> None:
    def respond(request: dict[str, Any]) -> Reply:
        step = len(bot.llm.requests)
        if step == 1:
            told = request["messages"][-1]["content"]
            saved = re.search(r"inbox/\S+\.txt", told)
            assert saved, told
            return tool("files", {"action": "read", "path": saved.group(0)})
        if step == 2:
            return tool("sandbox_exec", {"command": MAKE_PNG})
        if step == 3:
            return tool("files", {"action": "send", "path": "workspace/chart.png"})
        return text("The key is under the blue pot; here is your chart.")

    bot.llm.responder = respond
    bot.telegram.inject_message(
        OWNER, document=("notes.txt", NOTE), caption="Where is the key? Then chart it."
    )
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "The key is under the blue pot; here is your chart.")

    read, made, sent = tool_results(bot.llm)
    # The document's text reaches the model labelled as outside content, not instructions.
    assert read.startswith('<untrusted_content source="files">')
    assert NOTE.decode() in read and "notes.txt (43 bytes)" in read
    assert made.startswith("exit code: 0")
    assert "workspace/chart.png (71 bytes) goes to this chat as a photo." in sent
    await bot.telegram.wait_for("sendPhoto", timeout=10)
    (photo,) = [m for m in bot.telegram.messages(OWNER) if "photo_bytes" in m]
    workspace = bot.home / "workspaces" / workspace_name(str(OWNER))
    assert photo["photo_bytes"] == (workspace / "chart.png").read_bytes()
    assert photo["caption"] == "chart.png"


# ---------------------------------------------------------------- the tool itself


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("AUGURE", "OPENAI", "TELEGRAM")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AUGURE_ALLOWED_USERS", str(OWNER))
    path = tmp_path / "home"
    (path / "inbox").mkdir(parents=True)
    (path / "workspaces" / workspace_name(str(OWNER))).mkdir(parents=True)
    return path


def context(home: Path, chat: str | None = str(OWNER)) -> RunContext:
    config = load_config(home=home)
    caller = Caller.of("chat", chat_id=chat)
    return RunContext(config, MemoryStore(home / "memory"), cast(Any, None), caller)


async def call(home: Path, chat: str | None = str(OWNER), **args: Any) -> ToolResult:
    return await files.run_ungated(args, context(home, chat))


def workspace(home: Path) -> Path:
    return home / "workspaces" / workspace_name(str(OWNER))


async def test_list_shows_both_folders(home: Path) -> None:
    (home / "inbox" / "a.txt").write_text("alpha")
    (workspace(home) / "out").mkdir()
    result = await call(home, action="list")
    assert result.success
    assert "inbox/: 1 entries\n  a.txt  5 bytes" in result.output
    assert "workspace/: 1 entries\n  out/" in result.output


async def test_read_cuts_long_text_and_says_so(home: Path) -> None:
    (workspace(home) / "big.log").write_text("é" * READ_LIMIT)  # 2 bytes each: cut mid-way
    result = await call(home, action="read", path="workspace/big.log")
    assert result.success
    assert "[cut: only the first 100 kB of 200000 bytes shown]" in result.output
    assert "é" * 1000 in result.output and "\ufffd" not in result.output


async def test_read_of_a_binary_gives_type_and_size(home: Path) -> None:
    (home / "inbox" / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\0" * 96)
    (home / "inbox" / "blob.bin").write_bytes(b"\0\1\2" * 10)
    photo = await call(home, action="read", path="inbox/photo.jpg")
    assert photo.output == (
        "inbox/photo.jpg: image/jpeg, 100 bytes (not text; `send` delivers it to this chat)"
    )
    blob = await call(home, action="read", path="inbox/blob.bin")
    assert "application/octet-stream, 30 bytes" in blob.output


def pdf(*pages: str) -> bytes:
    """A minimal PDF with one line of text per page, offsets computed as the format wants."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for number, page in enumerate(pages):
        content = f"BT /F1 12 Tf 72 720 Td ({page}) Tj ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * number} 0 R >>"
        )
        objects.append(f"<< /Length {len(content)} >>\nstream\n{content}\nendstream")
    out = b"%PDF-1.4\n"
    offsets = []
    for index, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{index} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    return out + trailer.encode()


async def test_read_returns_the_text_of_a_pdf(home: Path) -> None:
    pytest.importorskip("pypdf", reason="pypdf is a dependency of the files tool")
    (home / "inbox" / "invoice.pdf").write_bytes(pdf("Invoice 42: total 99 EUR", "Thank you"))
    result = await call(home, action="read", path="inbox/invoice.pdf")
    assert result.success
    assert "--- page 1 ---\nInvoice 42: total 99 EUR" in result.output
    assert "--- page 2 ---\nThank you" in result.output and "[cut" not in result.output


async def test_a_long_pdf_is_cut_and_says_so(home: Path) -> None:
    pytest.importorskip("pypdf", reason="pypdf is a dependency of the files tool")
    pages = [f"Page {n} " + "word " * 600 for n in range(60)]  # about 180 kB of text
    (home / "inbox" / "book.pdf").write_bytes(pdf(*pages))
    result = await call(home, action="read", path="inbox/book.pdf")
    assert result.success and "Page 0 word" in result.output
    assert "Page 59" not in result.output
    assert result.output.endswith("[cut: only the first 100 kB of text shown]")


async def test_send_a_document_and_never_another_chats(home: Path) -> None:
    (workspace(home) / "report.csv").write_text("a,b\n1,2\n")
    result = await call(home, action="send", path="workspace/report.csv")
    assert result.success and result.output.endswith("as a document.")
    (artifact,) = result.artifacts
    assert (artifact.type, artifact.name, artifact.content) == ("file", "report.csv", b"a,b\n1,2\n")

    # A group has its own inbox: the owner's documents are not in it, so not sent there.
    (home / "inbox" / "bank.txt").write_text("the owner's")
    group = await call(home, chat="-100123", action="send", path="inbox/bank.txt")
    assert not group.success and not group.artifacts, group.output


@pytest.mark.parametrize(
    "path",
    ["../state.db", "/etc/passwd", "inbox/../../state.db", "memory/identity.md", "workspace/up"],
)
async def test_paths_that_leave_their_folder_are_refused(home: Path, path: str) -> None:
    (home / "state.db").write_text("secret conversations")
    os.symlink(home / "state.db", workspace(home) / "up")
    for action in ("read", "send", "list"):
        result = await call(home, action=action, path=path)
        assert not result.success, (action, path, result.output)
        assert "secret conversations" not in result.output and not result.artifacts


async def test_a_link_out_of_a_folder_is_refused_even_deep_inside(home: Path) -> None:
    outside = home.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    (workspace(home) / "deep").mkdir()
    os.symlink(outside, workspace(home) / "deep" / "door")
    result = await call(home, action="read", path="workspace/deep/door/secret.txt")
    assert not result.success and "leads outside workspace/" in result.output
    assert "top secret" not in result.output


async def test_the_schema_names_actions_and_path() -> None:
    schema = files.parameters
    assert schema["required"] == ["action"]
    assert schema["properties"]["action"]["enum"] == ["list", "read", "send"]
    assert "inbox/" in json.dumps(schema["properties"]["path"])
