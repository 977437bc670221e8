"""Where the templates installed beside the package (memory/, skills/) are found.

The wheel carries them as data files under `share/augure/`, which pip places under the
install scheme's data directory: the environment's prefix for an ordinary or virtualenv
install, the user base (`~/.local`) for `pip install --user`. A checkout has them at its top.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path


def candidates(name: str) -> list[Path]:
    """The places `name` (memory, skills) may be, the checkout's first."""
    found = [
        Path(__file__).resolve().parents[2] / name,
        Path(sys.prefix) / "share" / "augure" / name,
    ]
    user_scheme = sysconfig.get_preferred_scheme("user")
    found.append(Path(sysconfig.get_path("data", user_scheme)) / "share" / "augure" / name)
    return found
