"""`augure --version`: the version, and the commit it was built from when that is known."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from augure import __version__


class PrintVersion(argparse.Action):
    """`--version`: the commit is looked up only when asked, never on an ordinary start."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        commit = git_commit()
        print(f"augure {__version__}" + (f" (git {commit})" if commit else ""))
        parser.exit()


def git_commit() -> str | None:
    """The checkout's short commit when this package is the top of a git work tree; for an
    installed copy, the commit its build recorded (setup.py); None when neither is known."""
    return _checkout_commit() or _recorded_commit()


def _recorded_commit() -> str | None:
    from importlib.resources import files

    try:
        return files("augure").joinpath("commit.txt").read_text().strip() or None
    except OSError:
        return None


def _checkout_commit() -> str | None:
    """None for an installed copy, or when git is missing or refuses (another owner's
    repository)."""
    import subprocess

    package = Path(__file__).resolve().parents[1]  # augure/, beside the checkout's top
    command = ["git", "-C", str(package), "rev-parse", "--show-toplevel", "--short", "HEAD"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.splitlines()
    # A package installed inside some other project's repository is not that project's commit.
    if done.returncode != 0 or len(lines) != 2 or Path(lines[0]) != package.parent:
        return None
    return lines[1]
