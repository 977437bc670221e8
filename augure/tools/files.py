"""`files`: the documents sent in this chat (`inbox/`) and this chat's sandbox workspace.

Each chat has its own of both (`Config.inbox_dir`): in a guest's chat, `inbox/` is the
guest's documents, never the owner's (docs/security.md, "Guests"), and `send` delivers into
the chat that asked.

Paths are resolved inside their folder; anything that leaves it — `..`, an absolute path, a
symlink pointing out — is refused. Reads check where the opened file really is (through
/proc/self/fd), so a link swapped in by sandboxed code after the check still cannot lead out.

Only regular files are opened, and never in a way that can wait: a named pipe made in the
workspace would otherwise block open() — and with it the whole event loop — until someone
writes to it. The text of a PDF or an Office document is read in a child process held to
budgets (augure/tools/pdf_text.py, augure/tools/office_text.py).
"""

from __future__ import annotations

import mimetypes
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import Field

from augure.common.errors import NotDone
from augure.common.folders import workspace_name
from augure.tools.base import Artifact, RunContext, ToolResult, tool

READ_LIMIT = 100_000
LIST_LIMIT = 200
# Telegram's limits for bots: 50 MB per document, 10 MB per photo.
SEND_LIMIT = 50 * 1024 * 1024
PHOTO_LIMIT = 10 * 1024 * 1024
# Budgets for reading a PDF's text (docs/security.md): a few hostile kilobytes can keep pypdf
# busy for minutes or make it map gigabytes. Beyond the size budget, `send` still delivers it.
PDF_SECONDS = 30.0
PDF_MEMORY = 1024 * 1024 * 1024
PDF_MAX_BYTES = 50 * 1024 * 1024
ROOTS = ("inbox", "workspace")
IMAGE_MAGIC = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}
NOT_REGULAR = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFLNK: "a link",
    stat.S_IFDIR: "a folder",
}


class FilesError(NotDone):
    """A refusal the model can act on; the message is the whole explanation."""


def _root(ctx: RunContext, name: str) -> Path:
    if name == "inbox":
        return ctx.config.inbox_dir(ctx.chat_id)
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


def _refuse_unless_regular(mode: int, shown: str) -> None:
    if not stat.S_ISREG(mode):
        what = NOT_REGULAR.get(stat.S_IFMT(mode), "an unknown kind")
        raise FilesError(f"{shown} is not a regular file ({what}); refused")


def _open_inside(base: Path, target: Path, shown: str) -> int:
    """A read-only fd on target, checked to be inside base and a regular file once open.

    The checks on the open fd close the race with sandboxed code swapping the path after
    resolve(); O_NONBLOCK keeps a pipe swapped in from blocking open() meanwhile.
    """
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        real = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if not real.is_relative_to(base):
            raise FilesError(f"{shown} moved outside its folder; refused")
        _refuse_unless_regular(os.fstat(fd).st_mode, shown)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_head(base: Path, target: Path, shown: str, limit: int) -> tuple[bytes, int]:
    fd = _open_inside(base, target, shown)
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


async def _read_pdf(fd: int, size: int, shown: str) -> str:
    if size > PDF_MAX_BYTES:
        raise FilesError(
            f"{shown}: a PDF of {size} bytes, over the size budget for reading its text "
            f"({PDF_MAX_BYTES} bytes); `send` still delivers it"
        )
    # The readers load at the first document read, not at the bot's start (docs/performance.md).
    from augure.tools.pdf_text import ParseBudget, PdfRefused, PdfUnreadable, pdf_text

    try:
        text, cut = await pdf_text(fd, ParseBudget(PDF_SECONDS, PDF_MEMORY, READ_LIMIT))
    except PdfRefused as exc:
        raise FilesError(f"{shown}: {exc}; stopped") from None
    except PdfUnreadable as exc:
        return f"{shown}: PDF, {size} bytes; {exc}"
    note = f"\n[cut: only the first {READ_LIMIT // 1000} kB of text shown]" if cut else ""
    return f"{shown} (PDF, {size} bytes):\n{text}{note}"


async def _read_office(fd: int, size: int, shown: str, extension: str) -> str:
    """Word, Excel and PowerPoint files: zips of XML, read with the PDF's budgets."""
    kind = extension.lstrip(".")
    if size > PDF_MAX_BYTES:
        raise FilesError(
            f"{shown}: a .{kind} of {size} bytes, over the size budget for reading its text "
            f"({PDF_MAX_BYTES} bytes); `send` still delivers it"
        )
    # The readers load at the first document read, not at the bot's start (docs/performance.md).
    from augure.tools.office_text import PROGRAM as OFFICE_READER
    from augure.tools.pdf_text import ParseBudget, PdfRefused, PdfUnreadable, text_in_child

    budget = ParseBudget(PDF_SECONDS, PDF_MEMORY, READ_LIMIT)
    try:
        text, cut = await text_in_child(OFFICE_READER, fd, budget, extension)
    except PdfRefused as exc:
        raise FilesError(f"{shown}: {exc}; stopped") from None
    except PdfUnreadable as exc:
        return f"{shown}: .{kind}, {size} bytes; {exc}"
    note = f"\n[cut: only the first {READ_LIMIT // 1000} kB of text shown]" if cut else ""
    return f"{shown} (.{kind}, {size} bytes):\n{text}{note}"


async def _read(ctx: RunContext, path: str) -> str:
    # Which suffixes the Office reader takes: loaded at the first read (docs/performance.md).
    from augure.tools.office_text import FORMATS as OFFICE_FORMATS

    base, target, shown = resolve(ctx, path)
    mode = os.lstat(target).st_mode
    if stat.S_ISDIR(mode):
        return _list(ctx, path)
    _refuse_unless_regular(mode, shown)
    fd = _open_inside(base, target, shown)
    with os.fdopen(fd, "rb") as file:
        size = os.fstat(fd).st_size
        head = file.read(READ_LIMIT)
        kind = _kind(target.name, head)
        if kind == "application/pdf":
            return await _read_pdf(fd, size, shown)
        extension = target.suffix.lower()
        if extension in OFFICE_FORMATS and head.startswith(b"PK\x03\x04"):
            return await _read_office(fd, size, shown, extension)
    text = None if kind.startswith("image/") else _as_text(head)
    if text is None:
        return f"{shown}: {kind}, {size} bytes (not text; `send` delivers it to this chat)"
    note = (
        f"\n[cut: only the first {READ_LIMIT // 1000} kB of {size} bytes shown]"
        if size > READ_LIMIT
        else ""
    )
    return f"{shown} ({size} bytes):\n{text}{note}"


def _send(ctx: RunContext, path: str) -> ToolResult:
    # The artifact goes back with this chat's turn, and the folders are this chat's own: a
    # chat can be sent only what was sent or made in it.
    base, target, shown = resolve(ctx, path)
    mode = os.lstat(target).st_mode
    if stat.S_ISDIR(mode):
        raise FilesError(f"{shown} is a folder; send one file")
    _refuse_unless_regular(mode, shown)
    size = target.stat().st_size
    if size > SEND_LIMIT:
        raise FilesError(f"{shown} is {size} bytes; Telegram takes at most 50 MB")
    data, _ = _read_head(base, target, shown, SEND_LIMIT + 1)
    kind = _kind(target.name, data[:16])
    as_photo = kind.startswith("image/") and kind != "image/gif" and len(data) <= PHOTO_LIMIT
    artifact = Artifact("image" if as_photo else "file", target.name, data)
    how = "a photo" if as_photo else "a document"
    return ToolResult.ok(f"{shown} ({len(data)} bytes) goes to this chat as {how}.", [artifact])


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
    """List, read (text, PDF) or send into this chat: documents sent in this chat (inbox/)
    and this chat's sandbox files (workspace/)."""
    try:
        if action == "list":
            return ToolResult.ok(_list(ctx, path))
        if not path:
            return ToolResult.error(f"{action} needs a path, e.g. inbox/notes.txt")
        if action == "read":
            return ToolResult.ok(await _read(ctx, path))
        return _send(ctx, path)
    except FilesError as exc:
        return ToolResult.error(str(exc))
    except FileNotFoundError:
        return ToolResult.error(f"{path!r} does not exist; use action list to see what does")
    except OSError as exc:
        return ToolResult.error(f"{path!r}: {exc.strerror or type(exc).__name__}")
