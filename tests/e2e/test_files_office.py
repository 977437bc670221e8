"""`files read` of Office documents (docs/reference/tools.md#files): Word paragraphs and
tables in order, Excel sheets as tables, PowerPoint slides in order. The fixture files are
built here with the same libraries the reader uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_files import call
from tests.e2e.test_files import home as home  # the fixture: an owner's inbox and workspace


async def test_a_word_document_reads_as_headings_paragraphs_lists_and_tables(home: Path) -> None:
    docx = pytest.importorskip("docx", reason="python-docx is in the office extra")
    document = docx.Document()
    document.add_heading("Quarterly report", level=1)
    document.add_paragraph("Sales grew by 12 percent.")
    document.add_paragraph("Hire two engineers", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for cell, value in zip(table._cells, ["Region", "Sales", "North", "120"], strict=True):
        cell.text = value
    document.add_paragraph("Signed, the board.")
    document.save(home / "inbox" / "report.docx")

    result = await call(home, action="read", path="inbox/report.docx")

    assert result.success, result.output
    body = result.output.split("\n", 1)[1]
    assert body.index("# Quarterly report") < body.index("Sales grew by 12 percent.")
    assert "- Hire two engineers" in body
    assert "| Region | Sales |\n| --- | --- |\n| North | 120 |" in body
    assert body.index("| North | 120 |") < body.index("Signed, the board.")


async def test_a_workbook_reads_as_one_table_per_sheet(home: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl", reason="openpyxl is in the office extra")
    workbook = openpyxl.Workbook()
    first = workbook.active
    first.title = "Budget"
    first.append(["Item", "Cost"])
    first.append(["Rent", 1200])
    first.append(["Total", "=SUM(B2:B2)"])
    second = workbook.create_sheet("Notes")
    second.append(["Paid on the 1st"])
    workbook.save(home / "inbox" / "budget.xlsx")

    result = await call(home, action="read", path="inbox/budget.xlsx")

    assert result.success, result.output
    assert "## Sheet: Budget\n| Item | Cost |\n| --- | --- |\n| Rent | 1200 |" in result.output
    assert "## Sheet: Notes\n| Paid on the 1st |" in result.output
    assert result.output.index("Sheet: Budget") < result.output.index("Sheet: Notes")


async def test_a_presentation_reads_slide_by_slide_in_order(home: Path) -> None:
    pptx = pytest.importorskip("pptx", reason="python-pptx is in the office extra")
    presentation = pptx.Presentation()
    for title, point in [("Welcome", "Agenda for today"), ("Results", "Revenue doubled")]:
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = point
    presentation.save(home / "inbox" / "deck.pptx")

    result = await call(home, action="read", path="inbox/deck.pptx")

    assert result.success, result.output
    assert "--- slide 1 ---\nWelcome\nAgenda for today" in result.output
    assert "--- slide 2 ---\nResults\nRevenue doubled" in result.output
    assert result.output.index("slide 1") < result.output.index("slide 2")


async def test_a_damaged_office_file_is_an_answer_not_a_crash(home: Path) -> None:
    (home / "inbox" / "broken.docx").write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    result = await call(home, action="read", path="inbox/broken.docx")
    assert "inbox/broken.docx: .docx" in result.output
    assert "could not be read" in result.output or "needs python-docx" in result.output
