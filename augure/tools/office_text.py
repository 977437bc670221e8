"""The text of a Word, Excel or PowerPoint file, read in a child process held to budgets.

An Office file is a zip of XML: a few hostile kilobytes can expand to gigabytes or keep the
parser busy, so it is read the way a PDF is (augure/tools/pdf_text.py): in a child process
killed at the time budget, with its address space capped. The parent side is
`pdf_text.text_in_child`; this file is the child's program and, like the PDF reader, imports
only the standard library and the parsing library (the `office` extra).
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

# The child's exit status when the parser ran out of the address space it was given; the
# same as the PDF reader's, which the parent side reads.
OUT_OF_MEMORY = 3
PROGRAM = __file__
# Extension -> the library that reads it, named when it is missing.
FORMATS = {".docx": "python-docx", ".xlsx": "openpyxl", ".pptx": "python-pptx"}
INSTALL = "pip install 'augure[office]'"


def _row(cells: Iterable[object]) -> str:
    shown = (
        "" if cell is None else str(cell).replace("|", "\\|").replace("\n", " ") for cell in cells
    )
    return "| " + " | ".join(shown) + " |"


def _table(rows: list[list[object]]) -> Iterator[str]:
    """A Markdown table: the first row as its header, as the model reads tables best."""
    if not rows:
        return
    width = max(len(row) for row in rows)
    padded = [row + [None] * (width - len(row)) for row in rows]
    yield _row(padded[0])
    yield "|" + " --- |" * width
    for row in padded[1:]:
        yield _row(row)


def _docx(file: IO[bytes]) -> Iterator[str]:
    from docx import Document
    from docx.table import Table

    document = Document(file)
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            yield from _table([[cell.text for cell in row.cells] for row in block.rows])
            yield ""
            continue
        text = block.text.strip()
        if not text:
            continue
        style = (block.style.name if block.style is not None else "") or ""
        if style.startswith("Heading") and style[-1:].isdigit():
            yield "#" * int(style[-1]) + " " + text
        elif style == "Title":
            yield "# " + text
        elif style.startswith("List"):
            yield "- " + text
        else:
            yield text


def _xlsx(file: IO[bytes]) -> Iterator[str]:
    from openpyxl import load_workbook

    # read_only streams the rows instead of building every cell; data_only shows the values
    # the file last computed, not the formulas.
    workbook = load_workbook(file, read_only=True, data_only=True)
    for sheet in workbook.worksheets:
        yield f"## Sheet: {sheet.title}"
        rows = [
            list(row)
            for row in sheet.iter_rows(values_only=True)
            if any(cell is not None for cell in row)
        ]
        yield from _table(rows) if rows else iter(["(empty)"])
        yield ""


def _pptx(file: IO[bytes]) -> Iterator[str]:
    from pptx import Presentation

    presentation = Presentation(file)
    for number, slide in enumerate(presentation.slides, 1):
        yield f"--- slide {number} ---"
        for shape in slide.shapes:
            yield from _shape_text(shape)
        notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if notes is not None and notes.text.strip():
            yield f"[notes] {notes.text.strip()}"


def _shape_text(shape: Any) -> Iterator[str]:
    if getattr(shape, "has_table", False) and shape.has_table:
        yield from _table([[cell.text for cell in row.cells] for row in shape.table.rows])
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        for paragraph in shape.text_frame.paragraphs:
            text = "".join(run.text for run in paragraph.runs).strip()
            if text:
                yield ("  " * paragraph.level) + text
    for inner in getattr(shape, "shapes", ()):  # a group's shapes, in their order
        yield from _shape_text(inner)


READERS = {".docx": _docx, ".xlsx": _xlsx, ".pptx": _pptx}


def _extract(file: IO[bytes], extension: str, chars: int) -> tuple[str, bool]:
    parts: list[str] = []
    length = 0
    for line in READERS[extension](file):
        parts.append(line)
        length += len(line) + 1
        if length > chars:
            break
    joined = "\n".join(parts)
    return joined[:chars], length > chars


def _child(fd: int, chars: int, memory: int, extension: str) -> int:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        with os.fdopen(fd, "rb") as file:
            file.seek(0)
            text, cut = _extract(file, extension, chars)
        answer: dict[str, object] = {"text": text, "cut": cut}
    except MemoryError:
        os._exit(OUT_OF_MEMORY)  # at once: unwinding further may need memory too
    except ImportError:
        answer = {"error": f"its text needs {FORMATS[extension]}: {INSTALL}"}
    except Exception as exc:  # a damaged file is an answer, not a crash
        answer = {"error": f"its text could not be read ({type(exc).__name__})"}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    fd, chars, memory = (int(argument) for argument in sys.argv[1:4])
    sys.exit(_child(fd, chars, memory, sys.argv[4]))
