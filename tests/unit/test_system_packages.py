"""Without a system package its tests skip naming it; under CI the skip is a failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

NEEDS_BWRAP = """
import pytest

@pytest.mark.system_package("bubblewrap")
def test_uses_the_sandbox():
    pass
"""


def run_pytest(tmp_path: Path, source: str = NEEDS_BWRAP, **env: str) -> str:
    (tmp_path / "test_needs_it.py").write_text(source)
    # An empty PATH hides bwrap, as on a machine without it.
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-rs", "-q",
         "-p", "no:cacheprovider", str(tmp_path / "test_needs_it.py")],
        cwd=REPO, env={"PATH": "", "PYTHONPATH": str(REPO), **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return result.stdout + result.stderr


def test_missing_package_skips_naming_it(tmp_path: Path) -> None:
    out = run_pytest(tmp_path)
    assert "1 skipped" in out
    assert "needs the Debian package bubblewrap (apt-get install bubblewrap)" in out


def test_required_packages_turn_the_skip_into_a_failure(tmp_path: Path) -> None:
    out = run_pytest(tmp_path, AUGURE_REQUIRE_SYSTEM_PACKAGES="1")
    # A failure in setup is reported as an error: either way the run fails.
    assert "1 error" in out and "skipped" not in out
    assert "AUGURE_REQUIRE_SYSTEM_PACKAGES=1 forbids skipping" in out
