"""A web page's readable text (augure/tools/readable.py), made in a child process held to a
time, memory and output budget, as Office files and PDFs are (augure/tools/pdf_text.py).

A page is whatever a server chose to send: markup nested tens of thousands deep once kept
the parser busy for minutes, in a thread that could not be stopped and that `http`, `github`
and `email` share. In a child, the parse ends at the call's own deadline (the child is killed
there) and cannot take more memory than its budget, and other chats are answered meanwhile.
"""

from __future__ import annotations

import contextlib
import os

from augure.common.errors import NotDone
from augure.tools.pdf_text import ParseBudget, PdfRefused, PdfUnreadable, text_in_child
from augure.tools.readable import PROGRAM, TITLED

MEMORY = 512 * 1024 * 1024  # bytes of address space: a 10 MB page parses in well under that


class PageUnread(NotDone):
    """The readable text was not made; the message says why (the budget it went over)."""


async def page_text(
    html: str, url: str, seconds: float, chars: int, *, mode: str = TITLED
) -> tuple[str, bool]:
    """The page's readable text, and True when it was cut at `chars`; PageUnread when the
    parse went over a budget or failed. `mode`: augure.tools.readable's TITLED, UNTITLED
    or MAIL (an e-mail's HTML body, every part kept)."""
    if seconds <= 0:
        raise PageUnread("no time was left of the call's timeout to read it")
    # The page goes to the child through an anonymous in-memory file: no path anything else
    # could swap, and nothing on the command line (a URL may carry a key).
    fd = os.memfd_create("page", os.MFD_CLOEXEC)
    try:
        with contextlib.closing(os.fdopen(os.dup(fd), "wb")) as file:
            file.write(url.replace("\n", " ").encode() + b"\n" + html.encode("utf-8", "replace"))
        budget = ParseBudget(seconds, MEMORY, chars)
        return await text_in_child(PROGRAM, fd, budget, mode)
    except (PdfRefused, PdfUnreadable) as exc:
        raise PageUnread(str(exc)) from None
    finally:
        os.close(fd)
