"""Whether the configured backend can run, asked without loading it: the bot's start marks
`sandbox_exec` and `opencode` not configured from this alone (docs/performance.md)."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from augure.config.settings import Config


def missing_tools(as_root: bool | None = None) -> list[str]:
    root = os.geteuid() == 0 if as_root is None else as_root
    needed = ("bwrap", "prlimit", *(("setpriv", "unshare", "mount") if root else ()))
    return [name for name in needed if shutil.which(name) is None]


def sandbox_problem(config: Config) -> str | None:
    """None when the configured backend can run; otherwise what the owner must do."""
    backend = config.sandbox.backend
    if backend == "none":
        return "set [sandbox] backend to bwrap or docker"
    if backend == "docker":
        return None if shutil.which("docker") else "install Docker (no `docker` on PATH)"
    missing = missing_tools()
    if "bwrap" in missing:
        return "install bubblewrap"
    if missing:
        return f"install util-linux ({', '.join(missing)} missing)"
    return None
