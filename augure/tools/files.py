"""`files`: the documents the owner sent (`inbox/`) and this chat's sandbox workspace.

Paths are resolved inside their folder; anything that leaves it — `..`, an absolute path, a
symlink pointing out — is refused. Reads check where the opened file really is (through
/proc/self/fd), so a link swapped in by sandboxed code after the check still cannot lead out.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import Field

from augure.sandbox import workspace_name
from augure.tools.base import Artifact, RunContext, ToolResult, tool

READ_LIMIT = 100_000
LIST_LIMIT = 200
# Telegram's limits for bots: 50 MB per document, 10 MB per photo.
SEND_LIMIT = 50 * 1024 * 1024
PHOTO_LIMIT = 10 * 1024 * 1024
ROOTS = ("inbox", "workspace")
IMAGE_MAGIC = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}


class FilesError(Exception):
    """A refusal the model can act on; the message is the whole explanation."""


def _root(ctx: RunContext, name: str) -> Path:
    if name == "inbox":
        return ctx.home / "inbox"
    return ctx.home / "workspaces" / workspace_name(ctx.chat_id)


def resolve(ctx: RunContext, path: str) -> tuple[Path, Path, str]:
    """(folder, real path inside it, the path as shown) — or FilesError if it leaves."""
    given = PurePosixPath(path.strip().replace("\\", "/"))
    if given.is_absolute() or ".." in given.parts:
        raise FilesError(f"{path!r}: use a path under inbox/ or workspace/, without '..'")
    parts = [part for part in given.parts if part != "."]
    if not parts or parts[0] not in ROOTS:
        raise FilesError(f"{path!r}: paths start with inbox/ or workspace/")
    folder = _root(ctx, parts[0])
    if not folder.is_dir():
        raise FilesError(f"{parts[0]}/ is empty (nothing there yet)")
    base = folder.resolve()
    target = base.joinpath(*parts[1:]).resolve()
    if not target.is_relative_to(base):
        raise FilesError(f"{path!r} leads outside {parts[0]}/ (a link); refused")
    shown = "/".join([parts[0], *target.relative_to(base).parts])
    return base, target, shown


def _open_inside(base: Path, target: Path) -> int:
    """A read-only fd on target, checked to be inside base once open (no race with links)."""
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    real = Path(os.readlink(f"/proc/self/fd/{fd}"))
    if not real.is_relative_to(base) or not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FilesError("the file moved outside its folder or is not a regular file; refused")
    return fd


def _read_head(base: Path, target: Path, limit: int) -> tuple[bytes, int]:
    fd = _open_inside(base, target)
    with os.fdopen(fd, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        return file.read(limit), size


def _kind(name: str, head: bytes) -> str:
    for magic, mime in IMAGE_MAGIC.items():
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def _as_text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    # A cut may split a multi-byte character: up to 3 trailing bytes may be incomplete.
    for trim in range(4):
        try:
            return data[: len(data) - trim].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def _pdf_text(base: Path, target: Path) -> tuple[str, bool]:
    """The text of a PDF, first READ_LIMIT characters; True when cut."""
    from pypdf import PdfReader  # only when a PDF is read: it is not needed to start

    fd = _open_inside(base, target)
    with os.fdopen(fd, "rb") as file:
        reader = PdfReader(file)
        parts: list[str] = []
        length = 0
        for number, page in enumerate(reader.pages, 1):
            text = f"--- page {number} ---\n{page.extract_text() or ''}\n"
            parts.append(text)
            length += len(text)
            if length >= READ_LIMIT:
                break
    joined = "".join(parts)
    return joined[:READ_LIMIT], length > READ_LIMIT or len(parts) < len(reader.pages)


def _list(ctx: RunContext, path: str | None) -> str:
    if path is None or path.strip() in ("", ".", "/"):
        return "\n\n".join(_list(ctx, root) for root in ROOTS)
    try:
        _, folder, shown = resolve(ctx, path)
    except FilesError as exc:
        if path.strip().strip("/") in ROOTS:
            return f"{path.strip().strip('/')}/: empty"
        raise exc
    if not folder.is_dir():
        raise FilesError(f"{shown} is a file; use action read or send")
    entries = sorted(folder.iterdir(), key=lambda p: p.name)
    lines = [f"{shown}/: {len(entries)} entries"]
    for entry in entries[:LIST_LIMIT]:
        info = entry.lstat()
        if stat.S_ISDIR(info.st_mode):
            lines.append(f"  {entry.name}/")
        elif stat.S_ISLNK(info.st_mode):
            lines.append(f"  {entry.name} (link)")
        else:
            lines.append(f"  {entry.name}  {info.st_size} bytes")
    if len(entries) > LIST_LIMIT:
        lines.append(f"  [... {len(entries) - LIST_LIMIT} more not shown]")
    return "\n".join(lines)


def _read(ctx: RunContext, path: str) -> str:
    base, target, shown = resolve(ctx, path)
    if target.is_dir():
        return _list(ctx, path)
    head, size = _read_head(base, target, READ_LIMIT)
    kind = _kind(target.name, head)
    if kind == "application/pdf":
        try:
            pdf, cut = _pdf_text(base, target)
        except ImportError:
            return f"{shown}: PDF, {size} bytes (its text needs the pypdf package)"
        except Exception as exc:  # a damaged PDF is an answer, not a crash
            return f"{shown}: PDF, {size} bytes; its text could not be read ({type(exc).__name__})"
        note = f"\n[cut: only the first {READ_LIMIT // 1000} kB of text shown]" if cut else ""
        return f"{shown} (PDF, {size} bytes):\n{pdf}{note}"
    text = None if kind.startswith("image/") else _as_text(head)
    if text is None:
        return f"{shown}: {kind}, {size} bytes (not text; `send` delivers it to the owner)"
    note = (
        f"\n[cut: only the first {READ_LIMIT // 1000} kB of {size} bytes shown]"
        if size > READ_LIMIT
        else ""
    )
    return f"{shown} ({size} bytes):\n{text}{note}"


def _owners_chat(ctx: RunContext) -> bool:
    # Telegram private chats have the user's id; a group (negative id) or someone else's
    # chat is not the owner's. The terminal (`augure chat`, no numeric id) is the owner.
    chat = ctx.chat_id
    if chat is None or not chat.lstrip("-").isdigit():
        return True
    return int(chat) in ctx.config.telegram.allowed_users


def _send(ctx: RunContext, path: str) -> ToolResult:
    base, target, shown = resolve(ctx, path)
    if not _owners_chat(ctx):
        raise FilesError("send delivers to the owner's own chat only; this is another chat")
    if target.is_dir():
        raise FilesError(f"{shown} is a folder; send one file")
    size = target.stat().st_size
    if size > SEND_LIMIT:
        raise FilesError(f"{shown} is {size} bytes; Telegram takes at most 50 MB")
    data, _ = _read_head(base, target, SEND_LIMIT + 1)
    kind = _kind(target.name, data[:16])
    as_photo = kind.startswith("image/") and kind != "image/gif" and len(data) <= PHOTO_LIMIT
    artifact = Artifact("image" if as_photo else "file", target.name, data)
    how = "a photo" if as_photo else "a document"
    return ToolResult.ok(f"{shown} ({len(data)} bytes) goes to the owner as {how}.", [artifact])


@tool(
    "files",
    untrusted=True,  # documents come from outside; their text is data, not instructions
)
async def files(
    ctx: RunContext,
    action: Literal["list", "read", "send"],
    path: Annotated[
        str | None, Field(description="e.g. inbox/report.pdf; omit to list both folders")
    ] = None,
) -> ToolResult:
    """List, read (text, PDF) or send to the owner: documents the owner sent (inbox/) and
    this chat's sandbox files (workspace/)."""
    try:
        if action == "list":
            return ToolResult.ok(_list(ctx, path))
        if not path:
            return ToolResult.error(f"{action} needs a path, e.g. inbox/notes.txt")
        if action == "read":
            return ToolResult.ok(_read(ctx, path))
        return _send(ctx, path)
    except FilesError as exc:
        return ToolResult.error(str(exc))
    except FileNotFoundError:
        return ToolResult.error(f"{path!r} does not exist; use action list to see what does")
    except OSError as exc:
        return ToolResult.error(f"{path!r}: {exc.strerror or type(exc).__name__}")
