"""`augure backup` and `augure restore`: one .tar.gz of a home, safe while the bot runs.

`state.db` is copied with SQLite's online backup API, which reads one consistent snapshot
even while the bot writes (WAL mode); the archive then holds that copy, never the live file.
The env file with the secrets is not included, under any name: a backup can be stored
without them. Nor are links: restore refuses every link (see docs/security.md), so a backup
holds only plain files and folders.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sqlite3
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from augure.common.errors import UsageError
from augure.config.settings import ENV_FILE_NAME, default_home
from augure.host.home import private_home

log = logging.getLogger(__name__)

DATABASE = "state.db"
FOLDERS = ("memory", "skills", "personas")
CONFIG = "augure.toml"
ALLOWED_TOP = {DATABASE, CONFIG, *FOLDERS}
# The most a restore unpacks unless `--max-size` says otherwise: far above a home's size
# (state.db of years of chats is well under a gigabyte), far below a gzip bomb's.
MAX_SIZE = 10 << 30
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class BackupError(UsageError):
    """A refusal or failure, phrased as the one line the owner sees."""


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    backup = commands.add_parser(
        "backup",
        help="save state.db, memory, skills, personas, config to .tar.gz",
        description="Write one .tar.gz holding a consistent snapshot of state.db (safe while "
        "the bot runs), memory/, skills/, personas/ and augure.toml. Secrets in .env are "
        "not included; a secret written literally in augure.toml is (keep secrets in .env "
        "and name them as ${NAME}).",
    )
    backup.add_argument(
        "file", nargs="?", type=Path, help="archive to write (default augure-backup-TIME.tar.gz)"
    )
    text = "restore a backup into an empty AUGURE_HOME"
    restore = commands.add_parser(
        "restore", help=text, description=f"{text}; a home with anything in it is refused"
    )
    restore.add_argument("file", type=Path, help="a .tar.gz written by `augure backup`")
    restore.add_argument(
        "--max-size",
        type=_size,
        default=MAX_SIZE,
        metavar="SIZE",
        help="refuse an archive that would unpack to more than this (e.g. 500M, 20G; "
        "default 10G; never more than the disk's free space)",
    )


def _size(text: str) -> int:
    number, unit = text.strip().upper().rstrip("B"), ""
    if number[-1:] in UNITS:
        number, unit = number[:-1], number[-1]
    try:
        size = int(float(number) * UNITS[unit])
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 500M or 20G") from None
    if size <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 500M or 20G")
    return size


def _shown(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


ENV_LEFT_OUT = f"{ENV_FILE_NAME} is not part of a backup (it holds the secrets)"


async def backup_command(args: argparse.Namespace) -> int:
    try:
        written = create_backup(default_home(), args.file)
    except BackupError as exc:
        raise UsageError(str(exc)) from None
    print(f"wrote {written.resolve()}: {contents(written)}")
    print(f"{ENV_LEFT_OUT}: keep a copy of it elsewhere")
    return 0


async def restore_command(args: argparse.Namespace) -> int:
    home = default_home()
    try:
        restore_backup(args.file, home, args.max_size)
    except BackupError as exc:
        raise UsageError(str(exc)) from None
    print(f"restored {contents(args.file)} from {args.file.resolve()} into {home}")
    print(f"{ENV_LEFT_OUT}: copy the old one into {home}, mode 600")
    return 0


def contents(file: Path) -> str:
    """What an archive holds, in the owner's terms: each part, and the files in a folder."""
    with tarfile.open(file, "r:gz") as archive:
        members = archive.getmembers()
    files = {name: 0 for name in FOLDERS}
    present: set[str] = set()
    for member in members:
        top, *rest = PurePosixPath(member.name).parts
        present.add(top)
        if rest and member.isfile() and top in files:
            files[top] += 1
    parts = [name for name in (DATABASE, CONFIG) if name in present]
    for name, count in files.items():
        if name in present:
            parts.append(f"{name}/ ({count} file{'' if count == 1 else 's'})")
    return ", ".join(parts) or "nothing (the home was empty)"


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
    # Written beside the target, then renamed: a cut-off run never leaves a truncated archive.
    # The conversations are private: the archive is readable by its owner only.
    partial = file.with_name(f".{file.name}.partial")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as exc:
        raise BackupError(f"cannot write {file}: {exc.strerror or exc}") from None
    try:
        _write(home, fd)
        os.replace(partial, file)
    except OSError as exc:  # a full disk, a folder that went away
        raise BackupError(f"cannot write {file}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return file


def _write(home: Path, fd: int) -> None:
    """The archive of the home, written to `fd`."""
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
        keep = _plain_files_only(home)
        for name in (CONFIG, *FOLDERS):
            if (home / name).exists():
                archive.add(home / name, name, filter=keep)


def _plain_files_only(home: Path) -> Callable[[tarfile.TarInfo], tarfile.TarInfo | None]:
    """A tarfile filter keeping files and folders, as restore wants them. A symbolic link is
    left out (it may point anywhere, `.env` included); a second hard link to a file is stored
    as a copy; and the env file is left out under whatever name it is hard-linked."""
    try:
        env = (home / ENV_FILE_NAME).stat()
        secret = (env.st_dev, env.st_ino)
    except OSError:
        secret = None

    def keep(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if member.isdir():
            return member
        if member.issym():
            log.warning("not backed up (a symbolic link): %s", member.name)
            return None
        if not (member.isfile() or member.islnk()):
            log.warning("not backed up (not a file or a folder): %s", member.name)
            return None
        found = (home / member.name).lstat()
        if (found.st_dev, found.st_ino) == secret:
            log.warning("not backed up (it is %s, the secrets): %s", ENV_FILE_NAME, member.name)
            return None
        member.type, member.linkname, member.size = tarfile.REGTYPE, "", found.st_size
        return member

    return keep


def _refusal(member: tarfile.TarInfo) -> str | None:
    """Why this member must not be restored, or None. A backup holds only files and folders
    under the names it writes: a link of any kind, even one pointing inside the home, could
    let a later member (or a later write by the bot) land outside it."""
    name = repr(member.name)
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts:
        return f"{name} leaves the home"
    if member.issym() or member.islnk():
        kind = "symbolic" if member.issym() else "hard"
        return f"{name} is a {kind} link; a backup holds no links"
    if not path.parts or path.parts[0] not in ALLOWED_TOP:
        return f"{name} is not part of a backup"
    if not (member.isfile() or member.isdir()):
        return f"{name} is not a file or a folder"
    return None


def restore_backup(file: Path, home: Path, max_size: int = MAX_SIZE) -> None:
    """Unpack a backup into an empty (or new) home. Every member is checked before anything
    is written, their sizes against `max_size` and the disk's free space as the headers
    are read (a gzip bomb is refused before its data is); the files are unpacked into a
    folder inside the home and moved into place last, so a refused or failed restore leaves
    the home as it found it."""
    if home.exists() and (not home.is_dir() or any(home.iterdir())):
        raise BackupError(
            f"{home} is not empty; restore goes into an empty home (set AUGURE_HOME to a new one)"
        )
    try:
        limit, limit_is = _limit(home, max_size)
        with tarfile.open(file, "r:gz") as archive:
            members, total = [], 0
            for member in archive:  # header by header: nothing past a refusal is read
                problem = _refusal(member)
                total += member.size if member.isfile() else 0
                if problem is None and total > limit:
                    problem = f"its files would take over {_shown(total)}, more than {limit_is}"
                if problem is not None:
                    raise BackupError(f"refusing {file}: {problem}")
                members.append(member)
            _unpack(archive, members, home)
    except (OSError, tarfile.TarError) as exc:
        raise BackupError(f"cannot restore {file}: {exc}") from None


def _limit(home: Path, max_size: int) -> tuple[int, str]:
    """The most a restore may unpack, and how the refusal names it."""
    disk = home
    while not disk.exists():
        disk = disk.parent
    free = shutil.disk_usage(disk).free
    if free < max_size:
        return free, f"the {_shown(free)} free on the home's disk"
    return max_size, f"the {_shown(max_size)} limit (--max-size)"


def _unpack(archive: tarfile.TarFile, members: list[tarfile.TarInfo], home: Path) -> None:
    created = not home.exists()
    private_home(home)
    # Inside the home, not beside it: the home may be a mount point (a Docker volume), where
    # a rename from elsewhere would cross file systems.
    staging = Path(tempfile.mkdtemp(prefix=".restore-", dir=home))
    moved: list[Path] = []
    try:
        # The data filter is a second guard, and drops modes such as setuid.
        archive.extractall(staging, members=members, filter="data")
        for entry in sorted(staging.iterdir()):
            os.rename(entry, home / entry.name)
            moved.append(home / entry.name)
    except BaseException as exc:
        _undo(moved)
        if isinstance(exc, OSError) and isinstance(exc.filename, str):
            # Named as in the archive: the staging folder means nothing to the owner.
            where = os.path.relpath(exc.filename, staging)
            raise OSError(exc.errno, exc.strerror, where) from None
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(home.iterdir()):
            home.rmdir()
    private_home(home)  # state.db comes out of the archive with the mode it was stored with


def _undo(moved: list[Path]) -> None:
    for path in moved:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
