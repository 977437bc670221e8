"""Which Chromium the browser tool starts when `[tools.browser] executable_path` is not set."""

from __future__ import annotations

from pathlib import Path

import pytest

from augure.tools.browser import settings
from augure.tools.browser.settings import BrowserSettings, find_executable


def program(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_debians_headless_shell_is_found_where_no_full_chromium_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image installs chromium-headless-shell only (no GTK, Mesa or LLVM)."""
    monkeypatch.setattr(settings, "DEFAULT_EXECUTABLE", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("PATH", str(tmp_path))
    shell = program(tmp_path, "chromium-headless-shell")
    assert find_executable(BrowserSettings()) == str(shell)
    full = program(tmp_path, "chromium")
    assert find_executable(BrowserSettings()) == str(full)
