"""The Dockerfile builds and the image runs `augure`, where a Docker engine answers."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from augure import __version__

pytestmark = pytest.mark.engine("docker")

REPO = Path(__file__).resolve().parents[2]


def docker(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_image_builds_and_runs_augure() -> None:
    tag = f"augure-test:{uuid.uuid4().hex[:12]}"
    built = docker("build", "--tag", tag, str(REPO), timeout=1800)
    assert built.returncode == 0, built.stderr[-4000:]
    try:
        shown = docker("run", "--rm", tag, "augure", "--version", timeout=120)
        assert shown.returncode == 0, shown.stderr
        assert __version__ in shown.stdout
        # No bot without a token: one line naming what to set, not a traceback.
        started = docker("run", "--rm", tag, "augure", "run", timeout=120)
        assert started.returncode == 1
        assert "TELEGRAM_BOT_TOKEN" in started.stderr and "Traceback" not in started.stderr
    finally:
        docker("rmi", "--force", tag, timeout=120)
