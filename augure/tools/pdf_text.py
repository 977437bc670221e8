"""A PDF's text, read by pypdf in a child process held to a time, memory and output budget.

pypdf is pure Python and does whatever a PDF asks: a 1 kB file can keep it busy for minutes
or make it map gigabytes, and in the bot's own thread that freezes every chat
(docs/security.md). A thread cannot be stopped, so the parse runs in a child process the
parent kills at the time budget; the child caps its own address space first, so a memory
bomb ends in MemoryError instead of the host's OOM killer.

This file is also the child's program. It runs by path under `python -I` and imports only
the standard library and pypdf: the augure package would cost start-up time, and the copy
installed for the interpreter need not be the one running.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import signal
import sys
from dataclasses import dataclass
from typing import IO

from augure.common.errors import NotDone

# The child's exit status when pypdf ran out of the address space it was given.
OUT_OF_MEMORY = 3
# json.dumps escapes each character to at most 12 bytes (an astral one as a surrogate pair).
BYTES_PER_CHAR = 12


class PdfRefused(NotDone):
    """The parse went over a budget and was stopped; the message names the budget."""


class PdfUnreadable(NotDone):
    """pypdf could not read the file (damaged, encrypted, or pypdf missing)."""


@dataclass(frozen=True)
class ParseBudget:
    seconds: float
    memory: int  # bytes of address space the child may map
    chars: int  # characters of text handed back; the rest is cut


async def pdf_text(fd: int, budget: ParseBudget) -> tuple[str, bool]:
    """The text of the PDF open on fd, and True when it was cut at budget.chars."""
    return await text_in_child(__file__, fd, budget)


async def text_in_child(program: str, fd: int, budget: ParseBudget, *more: str) -> tuple[str, bool]:
    """Run a reader program (this file's protocol: fd, chars, memory, then `more`) on fd."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        program,
        str(fd),
        str(budget.chars),
        str(budget.memory),
        *more,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,  # the parser's warnings about a damaged file
        pass_fds=(fd,),  # the file checked by the caller, not a path that could be swapped
        env={},
        start_new_session=True,
    )
    cap = budget.chars * BYTES_PER_CHAR + 4096
    try:
        out = await asyncio.wait_for(_collect(process, cap), budget.seconds)
    except TimeoutError:
        raise PdfRefused(
            f"reading its text took over {budget.seconds:.3g} s (the time budget)"
        ) from None
    finally:
        # Also on cancellation (the executor's own timeout): no parse outlives its call.
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    if process.returncode == OUT_OF_MEMORY:
        raise PdfRefused(
            f"reading its text needed over {budget.memory >> 20} MB (the memory budget)"
        )
    if process.returncode != 0:
        raise PdfUnreadable(
            f"its text could not be read (the reader ended with {process.returncode})"
        )
    answer = json.loads(out)
    if "error" in answer:
        raise PdfUnreadable(answer["error"])
    return answer["text"], answer["cut"]


async def _collect(process: asyncio.subprocess.Process, cap: int) -> bytes:
    assert process.stdout is not None
    out = bytearray()
    while chunk := await process.stdout.read(65536):
        out += chunk
        if len(out) > cap:
            raise PdfRefused(f"its text ran past {cap} bytes (the output budget)")
    await process.wait()
    return bytes(out)


# ---------------------------------------------------------------- the child


def _extract(file: IO[bytes], chars: int) -> tuple[str, bool]:
    from pypdf import PdfReader

    reader = PdfReader(file)
    parts: list[str] = []
    length = 0
    for number, page in enumerate(reader.pages, 1):
        text = f"--- page {number} ---\n{page.extract_text() or ''}\n"
        parts.append(text)
        length += len(text)
        if length >= chars:
            break
    joined = "".join(parts)
    return joined[:chars], length > chars or len(parts) < len(reader.pages)


def _child(fd: int, chars: int, memory: int) -> int:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        with os.fdopen(fd, "rb") as file:
            text, cut = _extract(file, chars)
        answer: dict[str, object] = {"text": text, "cut": cut}
    except MemoryError:
        os._exit(OUT_OF_MEMORY)  # at once: unwinding further may need memory too
    except ImportError:
        answer = {"error": "its text needs the pypdf package"}
    except Exception as exc:  # a damaged PDF is an answer, not a crash
        answer = {"error": f"its text could not be read ({type(exc).__name__})"}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(_child(*(int(argument) for argument in sys.argv[1:4])))
