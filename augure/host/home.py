"""The home's privacy, and one bot per home.

The home holds the conversations, the memory and the secrets: it is the owner's only (0700),
and so are the files holding secrets or conversations (0600), whether the home is new or found
with wider modes (see docs/security.md).

One bot per home: a kernel lock on `$AUGURE_HOME/augure.lock`, and what `status` reads.
`flock` is released by the kernel when the holder dies, however it dies, so there is never a
stale pid file to clean up. The file also says who holds it (pid, since when, the last update
received), rewritten in place so a reader never sees it half-written for long.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from augure.common.errors import UsageError
from augure.config.settings import ENV_FILE_NAME

log = logging.getLogger(__name__)

LOCK_NAME = "augure.lock"
RECORD_BYTES = 256  # the record is padded to this size and rewritten with one pwrite
NOTE_EVERY_SECONDS = 1.0


PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
DATABASE = "state.db"
# SQLite makes the -wal and -shm files itself, with the database file's mode; ones left by
# an older version keep theirs, so they are tightened too.
PRIVATE_FILES = (ENV_FILE_NAME, DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm")


class HomeError(UsageError):
    """The home cannot be used (another bot holds it, or it is not writable)."""


def check_usable(home: Path) -> None:
    """Raise HomeError, one line naming AUGURE_HOME, when the home cannot be written or made.

    Every command asks this first, so that a home it cannot use is told as such, and never
    later as a damaged database or a traceback from whichever step met it first. A home not
    made yet is not made here: its nearest existing folder must be one the user can write in.
    """
    try:
        if home.is_dir():
            with tempfile.TemporaryFile(dir=home):  # a real write: a read-only mount, say
                pass
            return
        if home.exists():
            problem = "is a file, not a folder"
        else:
            existing = next(parent for parent in home.parents if parent.exists())
            if not existing.is_dir():
                problem = f"cannot be made: {existing} is a file, not a folder"
            elif not os.access(existing, os.W_OK | os.X_OK):
                problem = f"cannot be made: {existing} is not writable"
            else:
                return
    except OSError as exc:
        problem = f"cannot be written ({exc.strerror or exc})"
    chosen = (
        "set by the environment variable AUGURE_HOME"
        if os.environ.get("AUGURE_HOME")
        else "the default, as AUGURE_HOME is not set"
    )
    raise HomeError(
        f"AUGURE_HOME {home} ({chosen}) {problem}; point AUGURE_HOME at a folder you can write"
    )


def private_home(home: Path) -> None:
    """Create the home for its owner only, or take group and others' access away from the
    one found: a home shared on purpose still holds private conversations and secrets."""
    home.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    tighten(home, PRIVATE_FOLDER, follow=True)
    for name in PRIVATE_FILES:
        tighten(home / name, PRIVATE_FILE)


def tighten(path: Path, mode: int, *, follow: bool = False) -> None:
    """Drop the permissions `mode` does not grant; a missing path is fine. A symbolic link is
    left alone unless `follow`: chmod would change whatever it points at."""
    try:
        found = path.stat() if follow else path.lstat()
    except FileNotFoundError:
        return
    current = stat.S_IMODE(found.st_mode)
    if stat.S_ISLNK(found.st_mode) or current & ~mode == 0:
        return
    try:
        os.chmod(path, current & mode)
    except OSError as exc:  # not the owner, or a file system without modes: say so, go on
        log.warning("cannot make %s private (%s)", path, exc.strerror or exc)


def private_opener(path: str, flags: int) -> int:
    """For `open(..., opener=private_opener)`: a file it creates is its owner's only."""
    return os.open(path, flags, PRIVATE_FILE)


@dataclass(frozen=True)
class Holder:
    pid: int
    started_at: float
    last_update_at: float | None


class HomeLock:
    def __init__(self, home: Path) -> None:
        self.path = home / LOCK_NAME
        self._fd: int | None = None
        self._started_at = time.time()
        self._noted_at = 0.0

    def acquire(self) -> None:
        try:
            private_home(self.path.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise HomeError(
                f"AUGURE_HOME {self.path.parent} is not usable ({exc.strerror or exc}); "
                "point AUGURE_HOME at a writable folder"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read(fd)
            os.close(fd)
            who = f"pid {holder.pid}" if holder else "another process"
            raise HomeError(
                f"another Augure bot is already running on {self.path.parent} ({who}); "
                "stop it first, or use another AUGURE_HOME"
            ) from None
        self._fd = fd
        try:
            self._write(None)
        except OSError as exc:
            self.release()
            raise HomeError(
                f"cannot write to AUGURE_HOME {self.path.parent} ({exc.strerror or exc}); "
                "free some space or point AUGURE_HOME elsewhere"
            ) from None

    def note_update(self) -> None:
        """An update arrived; recorded at most once a second."""
        now = time.time()
        if self._fd is None or now - self._noted_at < NOTE_EVERY_SECONDS:
            return
        self._noted_at = now
        with contextlib.suppress(OSError):  # status is a convenience; never fail a turn on it
            self._write(now)

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor releases the flock

    def _write(self, last_update_at: float | None) -> None:
        assert self._fd is not None
        record = json.dumps(
            {"pid": os.getpid(), "started_at": self._started_at, "last_update_at": last_update_at}
        ).encode()
        os.pwrite(self._fd, record.ljust(RECORD_BYTES), 0)
        os.ftruncate(self._fd, RECORD_BYTES)


def holder(home: Path) -> Holder | None:
    """Who runs a bot on this home, or None when no one does."""
    try:
        fd = os.open(home / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(fd) or Holder(0, 0.0, None)
        return None  # we could lock it: nobody holds it
    finally:
        os.close(fd)


def _read(fd: int) -> Holder | None:
    for _ in range(3):  # a reader racing a rewrite tries again
        try:
            data = json.loads(os.pread(fd, RECORD_BYTES, 0).decode().strip() or "null")
            return Holder(int(data["pid"]), float(data["started_at"]), data["last_update_at"])
        except (ValueError, TypeError, KeyError):
            time.sleep(0.01)
    return None
