"""`augure backup` and `augure restore`: one .tar.gz of a home, safe while the bot runs.

`state.db` is copied with SQLite's online backup API, which reads one consistent snapshot
even while the bot writes (WAL mode); the archive then holds that copy, never the live file.
The env file with the secrets is not included: a backup can be stored without them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import tarfile
import tempfile
import time
from pathlib import Path, PurePosixPath

from augure.config import default_home
from augure.errors import UsageError

DATABASE = "state.db"
FOLDERS = ("memory", "skills", "personas")
CONFIG = "augure.toml"
ALLOWED_TOP = {DATABASE, CONFIG, *FOLDERS}


class BackupError(Exception):
    """A refusal or failure, phrased as the one line the owner sees."""


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    backup = commands.add_parser(
        "backup",
        help="save state.db, memory, skills, personas, config to .tar.gz",
        description="Write one .tar.gz holding a consistent snapshot of state.db (safe while "
        "the bot runs), memory/, skills/, personas/ and augure.toml. Secrets in .env are "
        "not included.",
    )
    backup.add_argument(
        "file", nargs="?", type=Path, help="archive to write (default augure-backup-TIME.tar.gz)"
    )
    text = "restore a backup into an empty AUGURE_HOME"
    restore = commands.add_parser(
        "restore", help=text, description=f"{text}; a home with anything in it is refused"
    )
    restore.add_argument("file", type=Path, help="a .tar.gz written by `augure backup`")


async def backup_command(args: argparse.Namespace) -> int:
    try:
        written = create_backup(default_home(), args.file)
    except BackupError as exc:
        raise UsageError(str(exc)) from None
    print(written)
    return 0


async def restore_command(args: argparse.Namespace) -> int:
    home = default_home()
    try:
        restore_backup(args.file, home)
    except BackupError as exc:
        raise UsageError(str(exc)) from None
    print(f"restored {args.file} into {home}")
    return 0


def default_name() -> Path:
    return Path(f"augure-backup-{time.strftime('%Y%m%d-%H%M%S')}.tar.gz")


def snapshot(database: Path, target: Path) -> None:
    """A consistent copy of a live database, through SQLite's online backup API."""
    source = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)  # all pages in one step: one read transaction, one snapshot
    finally:
        copy.close()
        source.close()


def create_backup(home: Path, file: Path | None = None) -> Path:
    if not home.is_dir():
        raise BackupError(f"nothing to back up: {home} does not exist (set AUGURE_HOME)")
    file = (file or default_name()).expanduser()
    if file.exists():
        raise BackupError(f"{file} already exists; choose another name")
    file.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target, then renamed: a cut-off run never leaves a truncated archive.
    # The conversations are private: the archive is readable by its owner only.
    partial = file.with_name(f".{file.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="augure-backup-") as scratch,
            os.fdopen(fd, "wb") as out,
            tarfile.open(fileobj=out, mode="w:gz") as archive,
        ):
            database = home / DATABASE
            if database.is_file():
                copy = Path(scratch) / DATABASE
                try:
                    snapshot(database, copy)
                except sqlite3.Error as exc:
                    raise BackupError(f"cannot read {database}: {exc}") from None
                archive.add(copy, DATABASE)
            for name in (CONFIG, *FOLDERS):
                if (home / name).exists():
                    archive.add(home / name, name)
        os.replace(partial, file)
    finally:
        partial.unlink(missing_ok=True)
    return file


def _checked(member: tarfile.TarInfo) -> str | None:
    """Why this member must not be extracted, or None."""
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts:
        return f"{member.name!r} leaves the home"
    if path.parts[0] not in ALLOWED_TOP:
        return f"{member.name!r} is not part of a backup"
    if member.islnk():
        return f"{member.name!r} is a hard link"
    if member.issym():
        target = PurePosixPath(member.linkname)
        inside = PurePosixPath(*path.parts[:-1], *target.parts)
        if target.is_absolute() or _escapes(inside):
            return f"{member.name!r} links outside the home"
    elif not (member.isfile() or member.isdir()):
        return f"{member.name!r} is not a file or a folder"
    return None


def _escapes(path: PurePosixPath) -> bool:
    depth = 0
    for part in path.parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return True
    return False


def restore_backup(file: Path, home: Path) -> None:
    if home.exists() and (not home.is_dir() or any(home.iterdir())):
        raise BackupError(
            f"{home} is not empty; restore goes into an empty home (set AUGURE_HOME to a new one)"
        )
    try:
        with tarfile.open(file, "r:gz") as archive:
            members = archive.getmembers()
            _extract(archive, members, file, home)
    except (OSError, tarfile.TarError) as exc:
        raise BackupError(f"cannot read {file}: {exc}") from None


def _extract(
    archive: tarfile.TarFile, members: list[tarfile.TarInfo], file: Path, home: Path
) -> None:
    for member in members:
        problem = _checked(member)
        if problem is not None:
            raise BackupError(f"refusing {file}: {problem}")
    home.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(home, 0o700)
    # The data filter re-checks paths and links, and drops modes that would be unsafe.
    archive.extractall(home, members=members, filter="data")
