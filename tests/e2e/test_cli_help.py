"""`augure --version`, `augure --help` and every command's own --help
(docs/reference/commands.md#common-to-every-command)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from augure import __version__
from augure.cli.parser import build_parser
from tests.e2e.helpers import augure, environment


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
    tuple[tuple[str, ...], argparse.ArgumentParser]
]:  # fmt: skip
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from commands(sub, (*path, name))


async def test_version(tmp_path: Path) -> None:
    code, out, _ = await augure("--version", env=environment(tmp_path))
    # The commit follows when run from a checkout (tests/e2e/test_first_errors.py).
    assert code == 0 and re.fullmatch(
        rf"augure {re.escape(__version__)}( \(git \w+\))?", out.strip()
    )


async def test_help_lists_every_command_on_one_line(tmp_path: Path) -> None:
    code, out, _ = await augure("--help", env=environment(tmp_path, {"COLUMNS": "80"}))
    assert code == 0
    top = [path[0] for path, _ in commands(build_parser()) if len(path) == 1]
    assert {"init", "run", "chat", "doctor", "backup", "restore", "tools", "jobs"} <= set(top)
    lines = out.splitlines()
    for name in top:
        (line,) = [i for i, text in enumerate(lines) if re.match(rf"    {name} +\S", text)]
        # The next line is the next command (or the end of the list), not a wrapped help.
        following = lines[line + 1]
        assert not re.match(r" {6,}\S", following), f"{name}: help wraps onto a second line"


def test_every_command_and_option_is_described() -> None:
    for path, parser in commands(build_parser()):
        assert parser.description, f"augure {' '.join(path)} --help has no description"
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            assert action.help, f"augure {' '.join(path)}: {action.dest} is not described"


async def test_a_subcommand_help_runs_without_a_config(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text("not toml [")
    code, out, _ = await augure("backup", "--help", env=environment(tmp_path))
    assert code == 0 and "consistent snapshot of state.db" in out
