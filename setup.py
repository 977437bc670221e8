"""The build records the commit it was built from, so that `augure --version` names it for an
installed copy too, where no git checkout is at hand (docs/operations.md, "Upgrading").

Everything else about the package is declared in pyproject.toml.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def built_from() -> str | None:
    """`AUGURE_COMMIT` (an image build passes it in), else this checkout's short commit."""
    if given := os.environ.get("AUGURE_COMMIT", "").strip():
        return given
    command = ["git", "-C", str(HERE), "rev-parse", "--show-toplevel", "--short", "HEAD"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.splitlines()
    # A source folder inside some other project's repository is not that project's commit.
    if done.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != HERE:
        return None
    return lines[1]


class BuildWithCommit(build_py):
    def run(self) -> None:
        super().run()
        commit = built_from()
        if commit and not self.editable_mode:  # an editable install asks git itself
            Path(self.build_lib, "augure", "commit.txt").write_text(commit + "\n")


setup(cmdclass={"build_py": BuildWithCommit})
