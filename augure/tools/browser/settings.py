"""`[tools.browser]`, and which Chromium it names: all the bot's start needs of the browser
(the pool, its guard proxy and Playwright load at the tool's first call)."""

from __future__ import annotations

import os
import shutil

from pydantic import BaseModel, ConfigDict

from augure.config.tools import settings_for

DEFAULT_EXECUTABLE = "/usr/bin/chromium"


@settings_for("browser")
class BrowserSettings(BaseModel):
    """`[tools.browser]`."""

    model_config = ConfigDict(extra="forbid")

    executable_path: str | None = None
    headless: bool = True


def find_executable(settings: BrowserSettings) -> str | None:
    if settings.executable_path:
        path = os.path.expanduser(settings.executable_path)
        return path if os.access(path, os.X_OK) else None
    if os.access(DEFAULT_EXECUTABLE, os.X_OK):
        return DEFAULT_EXECUTABLE
    # Debian's headless-only build, without GTK, Mesa or LLVM: what the image installs.
    return shutil.which("chromium") or shutil.which("chromium-headless-shell")
