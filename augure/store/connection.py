"""The state layer: one SQLite connection, owned by one thread, handed whole operations.

CPython 3.11's sqlite3 resets a cached statement when a cursor is freed, on whatever thread
frees it; an async wrapper that lets cursors cross threads (aiosqlite) therefore corrupts
statements under load. Here nothing sqlite3 ever leaves the database thread: callers pass a
function, it runs there wholly, and only plain values come back.

Writes are one explicit transaction per logical operation (`BEGIN IMMEDIATE` … `COMMIT`,
`ROLLBACK` on any error). A database that another process holds locked is retried for up to
`busy_seconds` with the event loop free meanwhile, then `StoreBusy` tells the caller to try
again later.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from augure.common.errors import Unavailable, UsageError
from augure.host.home import PRIVATE_FILE, tighten

log = logging.getLogger(__name__)

T = TypeVar("T")
Params = Sequence[Any] | dict[str, Any]

BUSY_SECONDS = 30.0
# Each attempt waits this long inside SQLite for a lock; between attempts the thread is free
# for other work (reads of other chats), so one locked writer never stalls the whole bot.
ATTEMPT_TIMEOUT_MS = 200


class StateError(UsageError):
    """state.db cannot be used at all (corrupt, unreadable, disk full): stop, say how to fix."""


class StoreBusy(Unavailable):
    """The database stayed locked by someone else for longer than we wait."""

    def __str__(self) -> str:
        return "the state database is busy (locked by another process); please try again"


@dataclass(frozen=True)
class Changed:
    rowcount: int
    lastrowid: int | None


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def _make_private(path: Path) -> None:
    """The conversations are in this file: created for its owner only, before SQLite makes it
    with the umask's mode. SQLite gives the -wal and -shm files it makes the database file's
    mode; ones found from before are tightened with it (see docs/security.md)."""
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT, PRIVATE_FILE))
    for name in (path, path.with_name(f"{path.name}-wal"), path.with_name(f"{path.name}-shm")):
        tighten(name, PRIVATE_FILE)


class Database:
    def __init__(self, path: Path, busy_seconds: float = BUSY_SECONDS) -> None:
        self.path = path
        self.busy_seconds = busy_seconds
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="augure-db")
        self._connection: sqlite3.Connection | None = None

    @classmethod
    async def open(cls, path: Path, migrations: Sequence[str] = ()) -> Database:
        """Connect and migrate; a file that is not a usable database raises StateError."""
        try:
            _make_private(path)
        except OSError as exc:
            raise StateError(f"{path} cannot be used ({exc.strerror or exc})") from None
        database = cls(path)
        try:
            await database._retry(database._connect)
            await database._migrate(migrations)
        except StoreBusy:
            await database.close()
            raise StateError(f"{path} stayed locked by another process; try again") from None
        except sqlite3.Error as exc:
            await database.close()
            raise StateError(
                f"{path} cannot be used ({exc}). If it is damaged, stop Augure, move it aside "
                "and restore a backup (`augure restore FILE`) or start with an empty state."
            ) from None
        return database

    def _connect(self) -> None:
        connection = sqlite3.connect(self.path, isolation_level=None, timeout=0)
        try:
            connection.row_factory = sqlite3.Row
            connection.execute(f"PRAGMA busy_timeout={ATTEMPT_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode=WAL").fetchone()
            # NORMAL is durable across process crashes in WAL mode; only power loss can drop
            # the last commits, the trade SQLite documents for WAL.
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA foreign_keys=ON")
            # What is deleted is overwritten, not left in a free page (docs/recall.md).
            connection.execute("PRAGMA secure_delete=ON")
            connection.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        except BaseException:
            connection.close()
            raise
        self._connection = connection

    async def _migrate(self, migrations: Sequence[str]) -> None:
        version = int((await self.fetchone("PRAGMA user_version") or (0,))[0])
        if version < len(migrations):
            pending = "\n".join(migrations[version:])
            await self._retry(functools.partial(self._run_script, pending, len(migrations)))

    def _run_script(self, script: str, number: int) -> None:
        """Every pending migration in one transaction: an upgrade is whole or not at all,
        and a new home's schema is one commit, not one per migration."""
        connection = self._require()
        try:
            connection.executescript(
                f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version={number};\nCOMMIT;"
            )
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise

    async def close(self) -> None:
        if self._connection is not None:
            connection, self._connection = self._connection, None
            await asyncio.get_running_loop().run_in_executor(self._thread, connection.close)
        self._thread.shutdown(wait=True)

    # -- the two doors -------------------------------------------------------------------

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on the database thread against one consistent snapshot."""
        return await self._retry(lambda: self._in_transaction(fn, "BEGIN"))

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` as one transaction: all of its writes commit, or none do."""
        return await self._retry(lambda: self._in_transaction(fn, "BEGIN IMMEDIATE"))

    async def outside_transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on the database thread with no transaction open (VACUUM, a checkpoint)."""
        return await self._retry(lambda: fn(self._require()))

    # -- conveniences over the two doors ---------------------------------------------------

    async def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        return await self._retry(lambda: self._require().execute(sql, params).fetchall())

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        def one() -> sqlite3.Row | None:
            cursor = self._require().execute(sql, params)
            try:
                row: sqlite3.Row | None = cursor.fetchone()
                return row
            finally:
                cursor.close()

        return await self._retry(one)

    async def execute(self, sql: str, params: Params = ()) -> Changed:
        """One statement as its own write transaction."""

        def run(connection: sqlite3.Connection) -> Changed:
            cursor = connection.execute(sql, params)
            return Changed(cursor.rowcount, cursor.lastrowid)

        return await self.write(run)

    # -- machinery -----------------------------------------------------------------------

    def _require(self) -> sqlite3.Connection:
        if self._connection is None:
            raise sqlite3.ProgrammingError("the state database is closed")
        return self._connection

    def _in_transaction(self, fn: Callable[[sqlite3.Connection], T], begin: str) -> T:
        connection = self._require()
        connection.execute(begin)
        try:
            result = fn(connection)
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        try:
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return result

    async def _call(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn)

    async def _retry(self, fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.busy_seconds
        pause = 0.02
        while True:
            try:
                return await self._call(fn)
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
                if time.monotonic() >= deadline:
                    log.warning("state.db stayed locked for %.0f s", self.busy_seconds)
                    raise StoreBusy from None
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)
