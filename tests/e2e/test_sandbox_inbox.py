"""Documents the owner sent, seen read-only under `inbox/` in the real bubblewrap sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from augure.channels.telegram.media import save_to_inbox
from augure.sandbox import workspace_for
from augure.sandbox.bwrap import BwrapSandbox
from augure.tools.sandbox_exec import sandbox_exec
from tests.e2e.test_sandbox import SECRET, context, home, make_config

pytestmark = pytest.mark.system_package("bubblewrap")
__all__ = ["home"]  # the fixture, reused


async def test_sent_document_is_readable_in_the_sandbox_and_not_writable(home: Path) -> None:
    saved = await save_to_inbox(
        home / "inbox", b"quarterly figures: 42\n", "20260101-120000-report.txt"
    )
    config = make_config(home)

    async def run(command: str) -> Any:
        return await sandbox_exec.run_ungated({"command": command}, context(config))

    result = await run(f"cat inbox/{saved.name}")
    assert result.ok, result.output
    assert "quarterly figures: 42" in result.output

    result = await run(
        f"echo changed > inbox/{saved.name}; rm -f inbox/{saved.name}; touch inbox/new; ls inbox"
    )
    assert "Read-only file system" in result.output
    assert saved.read_bytes() == b"quarterly figures: 42\n"
    assert sorted(p.name for p in (home / "inbox").iterdir()) == [saved.name]

    # The folder is the inbox alone: its parent inside is the workspace, not the home.
    result = await run("cat inbox/../augure.toml inbox/../../augure.toml; ls -a inbox/..")
    assert SECRET not in result.output and "No such file" in result.output
    assert "state.db" not in result.output


async def test_a_file_named_inbox_in_the_workspace_keeps_the_sandbox_working(
    home: Path,
) -> None:
    """A chat that made its own `inbox` file before must still run commands."""
    await save_to_inbox(home / "inbox", b"x", "a.txt")
    config = make_config(home)
    sandbox = BwrapSandbox(config.sandbox)
    (workspace_for(home, "chat-a", sandbox) / "inbox").write_text("mine")
    result = await sandbox_exec.run_ungated({"command": "cat inbox"}, context(config))
    assert result.ok and "mine" in result.output
