"""What the process does around its imports: keep a library's optional integrations that
Augure never uses out of it, and spare the garbage collector the objects the imports make.

python-telegram-bot loads `cryptography` whenever it is installed (for Telegram Passport),
and the openai SDK loads `aiohttp` whenever it is installed (for an alternative HTTP client
Augure does not ask for). Each costs megabytes of memory and tens of milliseconds, in a
process meant to idle small. Both libraries take their "not installed" branch when the
import fails, so the module is marked unimportable for the duration of that one import.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def importing_without(*modules: str) -> Iterator[None]:
    """Within the block, importing any of `modules` fails as if it were not installed (a
    None entry in sys.modules is Python's own mark for that). One already imported stays;
    the marks are removed on leaving, so a later import (a tool's first run) works."""
    hidden = [name for name in modules if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """For the imports made once at start. What they make (modules, classes, functions)
    lives as long as the process, yet the cyclic collector would walk it again in every
    collection that fires while the imports allocate: many collections, one of them over
    everything: a share of `augure run`'s start (docs/performance.md). The collector is off in the
    block; on leaving, what exists is set aside for good (`gc.freeze`: later collections
    walk only what is made after) and the collector is on again if it was. Reference
    counting frees objects as always; only the few cycles the imports left
    are never collected."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
