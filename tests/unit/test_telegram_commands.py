"""The docs list the bot's commands as its table declares them: every command, and where each
answers (docs/reference/telegram.md#commands, the README, the Telegram guide). The running bot's
menu and /help are held to the same table by tests/e2e/test_commands.py."""

from __future__ import annotations

import re
from pathlib import Path

from augure.channels.telegram.commands import COMMANDS, help_text

ROOT = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"`/([a-z_]+)")
OWNERS_CHAT = "owner's private chat"
ANY_CHAT = "any chat"


def where(owner_only: bool) -> str:
    return OWNERS_CHAT if owner_only else ANY_CHAT


def table() -> dict[str, str]:
    return {command.name: where(command.owner_only) for command in COMMANDS}


def section(text: str, heading: str) -> str:
    """From `heading` to the next heading of its level or above."""
    start = text.index(f"\n{heading}\n")
    level = heading.split(" ", 1)[0]
    rest = text[start + len(heading) + 2 :]
    ends = [m.start() for m in re.finditer(rf"\n#{{1,{len(level)}}} ", rest)]
    return rest[: ends[0]] if ends else rest


def between(text: str, start: str, end: str) -> str:
    begin = text.index(start) + len(start)
    return text[begin : text.index(end, begin)]


def paragraph(text: str, opening: str) -> str:
    start = text.index(opening)
    end = text.find("\n\n", start)
    return text[start : end if end != -1 else len(text)]


def test_the_names_are_unique_and_each_command_is_told_in_help() -> None:
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names))
    told = set(NAMED.findall(help_text().replace("/", "`/")))
    assert told == set(names) - {"start"}  # /start greets with the help text itself


def test_the_reference_lists_every_command_and_where_it_answers() -> None:
    page = (ROOT / "docs" / "reference" / "telegram.md").read_text(encoding="utf-8")
    listed: dict[str, str] = {}
    for row in section(page, "## Commands").splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`/"):
            continue
        for name in NAMED.findall(cells[0]):
            assert name not in listed, f"/{name} is listed twice"
            listed[name] = cells[1]
    assert listed == table()


def test_the_readme_names_every_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = NAMED.findall(paragraph(readme, "In Telegram: `/start`"))
    assert set(named) == set(table())
