"""Token counts: from a real tokenizer where one is at hand, about 4 characters a token otherwise.

tiktoken is optional (it comes with the `search` extra, or `pip install tiktoken`). Left to
itself, its first use downloads the encoding's BPE file from the internet; Augure never lets
it: the encoding is used only when it already sits in the cache the owner provisioned
(`TIKTOKEN_CACHE_DIR`), and the bot reaches no host but the model's and Telegram's. Loading
is tried once per process, bounded in time; any failure means the estimate from then on.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import logging
import os
import threading
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
# The encoding of OpenAI's current models; close enough for others' budgets and /usage.
ENCODING = "o200k_base"
LOAD_SECONDS = 3.0
# Where tiktoken fetches the encoding from; its cache names the file by this address's sha1.
BPE_SOURCE = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


class Encoding(Protocol):
    """What is needed of a tokenizer (tiktoken's Encoding has it)."""

    def encode_ordinary(self, text: str) -> list[int]: ...


class _Default(enum.Enum):
    DEFAULT = "default"


# "Whatever this process has": the tokenizer if it loaded, else the estimate.
DEFAULT = _Default.DEFAULT
Choice = Encoding | None | _Default


def count(text: str, encoding: Choice = DEFAULT) -> int:
    """Tokens in `text`; `None` asks for the estimate explicitly."""
    coder = resolve(encoding)
    if coder is None:
        return len(text) // CHARS_PER_TOKEN
    return len(coder.encode_ordinary(text))


def resolve(encoding: Choice) -> Encoding | None:
    return default_encoding() if encoding is DEFAULT else encoding


@functools.cache
def default_encoding() -> Encoding | None:
    return load(_tiktoken)


def load(loader: Callable[[], Encoding], seconds: float = LOAD_SECONDS) -> Encoding | None:
    """`loader()`'s encoding, or None if it fails in any way or takes over `seconds` (a
    download with no network can hang): the caller then estimates."""
    result: list[Encoding] = []
    problem: list[str] = []

    def attempt() -> None:
        try:
            result.append(loader())
        except BaseException as exc:  # an optional library: whatever it raises, estimate
            problem.append(f"{type(exc).__name__}: {exc}")

    # A daemon thread: one stuck in a download never holds the process at exit.
    worker = threading.Thread(target=attempt, name="augure-tokenizer", daemon=True)
    worker.start()
    worker.join(seconds)
    if result:
        return result[0]
    reason = problem[0] if problem else f"not loaded within {seconds:g} s"
    log.info("token counts are estimated (%s)", reason.splitlines()[0][:200])
    return None


def cached_bpe() -> str | None:
    """The encoding's file in the provisioned tiktoken cache, if it is there."""
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not cache:
        return None
    path = os.path.join(cache, hashlib.sha1(BPE_SOURCE.encode()).hexdigest())
    return path if os.path.isfile(path) else None


def _tiktoken() -> Encoding:
    # Checked first, so tiktoken is never asked for a file it would have to download.
    if cached_bpe() is None:
        raise LookupError(f"{ENCODING} is not in a tiktoken cache (TIKTOKEN_CACHE_DIR)")
    import tiktoken  # optional: ImportError is one of the failures `load` absorbs

    encoding: Encoding = tiktoken.get_encoding(ENCODING)
    return encoding
