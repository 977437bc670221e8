"""`augure backup` / `augure restore` (docs/reference/commands.md#augure-backup-file): a consistent
snapshot while another process writes, and restores that refuse a non-empty home and archives that
would escape it."""

from __future__ import annotations

import asyncio
import io
import re
import sqlite3
import sys
import tarfile
from pathlib import Path

import pytest

from augure.cli.backup import create_backup
from tests.e2e.helpers import augure, environment

ROOT = Path(__file__).resolve().parents[2]
BATCH = 50
# Writes batches of BATCH rows, each in one transaction, until told to stop: a snapshot
# taken in the middle of a transaction would hold a partial batch.
WRITER = """
import sqlite3, sys, pathlib
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("PRAGMA journal_mode=WAL")
stop = pathlib.Path(sys.argv[2])
batch = 0
while not stop.exists():
    batch += 1
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO rows (batch, payload) VALUES (?, ?)",
                   [(batch, "x" * 200) for _ in range(BATCH)])
    db.execute("COMMIT")
    if batch == 20:
        pathlib.Path(sys.argv[3]).touch()
""".replace("BATCH", str(BATCH))


def make_home(home: Path) -> None:
    (home / "memory").mkdir(parents=True)
    (home / "memory" / "identity.md").write_text("I am Augure.")
    (home / "skills" / "daily").mkdir(parents=True)
    (home / "skills" / "daily" / "SKILL.md").write_text("---\nname: daily\n---\n")
    (home / "personas").mkdir()
    (home / "personas" / "pirate.md").write_text("Arr.")
    (home / "augure.toml").write_text('[llm]\nmodel = "m"\n')
    (home / ".env").write_text("TELEGRAM_BOT_TOKEN=1:secret\n")
    (home / "inbox").mkdir()
    db = sqlite3.connect(home / "state.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE rows (batch INTEGER, payload TEXT)")
    db.commit()
    db.close()


async def test_backup_while_another_process_writes_is_consistent(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_home(home)
    stop, started = tmp_path / "stop", tmp_path / "started"
    writer = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WRITER, str(home / "state.db"), str(stop), str(started)
    )
    try:
        while not started.exists():
            assert writer.returncode is None, "the writer died"
            await asyncio.sleep(0.05)
        archive = tmp_path / "backup.tar.gz"
        code, out, err = await augure("backup", str(archive), env=environment(home))
        assert code == 0, err
        assert out.startswith(f"wrote {archive}: state.db, "), out
    finally:
        stop.touch()
        await asyncio.wait_for(writer.wait(), 30)

    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        tar.extractall(tmp_path / "out", filter="data")
    assert {"state.db", "augure.toml", "memory/identity.md", "skills/daily/SKILL.md"} <= names
    assert "personas/pirate.md" in names
    assert not any(name.startswith((".env", "inbox", "state.db-")) for name in names)
    copy = sqlite3.connect(tmp_path / "out" / "state.db")
    assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    sizes = copy.execute("SELECT batch, count(*) FROM rows GROUP BY batch").fetchall()
    assert len(sizes) >= 20  # the rows committed before the backup are in it
    assert {size for _, size in sizes} == {BATCH}  # and no batch is cut in half
    assert (archive.stat().st_mode & 0o077) == 0


async def test_restore_into_an_empty_home_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_home(home)
    archive = tmp_path / "b.tar.gz"
    assert (await augure("backup", str(archive), env=environment(home)))[0] == 0

    fresh = tmp_path / "fresh"
    code, _, err = await augure("restore", str(archive), env=environment(fresh))
    assert code == 0, err
    assert (fresh / "memory" / "identity.md").read_text() == "I am Augure."
    assert (fresh / "personas" / "pirate.md").read_text() == "Arr."
    assert (fresh / "augure.toml").read_text() == '[llm]\nmodel = "m"\n'
    assert sqlite3.connect(fresh / "state.db").execute("SELECT count(*) FROM rows").fetchone()

    code, _, err = await augure("restore", str(archive), env=environment(home))
    assert code == 1 and err.count("\n") == 1
    assert "is not empty; restore goes into an empty home" in err


def evil_archive(path: Path, member: tarfile.TarInfo, data: bytes = b"x") -> None:
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("memory/ok.md")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"ok"))
        if member.isfile():
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
        else:
            tar.addfile(member)


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        (tarfile.TarInfo("/etc/cron.d/evil"), "leaves the home"),
        (tarfile.TarInfo("memory/../../evil"), "leaves the home"),
        (tarfile.TarInfo("inbox/x"), "is not part of a backup"),
        (link("memory/passwd", "/etc/passwd"), "is a symbolic link"),
        (link("memory/up", "../../outside"), "is a symbolic link"),
        (link("memory/hard", "/etc/passwd", tarfile.LNKTYPE), "is a hard link"),
    ],
)
async def test_restore_refuses_archives_escaping_the_home(
    tmp_path: Path, member: tarfile.TarInfo, expected: str
) -> None:
    archive = tmp_path / "evil.tar.gz"
    evil_archive(archive, member)
    home = tmp_path / "home"
    code, _, err = await augure("restore", str(archive), env=environment(home))
    assert code == 1 and expected in err and "Traceback" not in err, err
    assert not home.exists()
    assert not (tmp_path / "outside").exists() and not (tmp_path / "evil").exists()


def test_default_name_has_a_timestamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    make_home(home)
    monkeypatch.chdir(tmp_path)
    written = create_backup(home)
    assert re.fullmatch(r"augure-backup-\d{8}-\d{6}\.tar\.gz", written.name)
    assert (tmp_path / written).is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


HOLDS = "state.db, augure.toml, memory/ (1 file), skills/ (1 file), personas/ (1 file)"
ENV_LEFT_OUT = ".env is not part of a backup (it holds the secrets)"


async def test_backup_says_what_it_wrote_and_that_env_is_left_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_home(home)
    # Run from another folder with a relative name, as an owner typing it would.
    env = environment(home, {"PYTHONPATH": str(ROOT)})
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "augure", "backup", "b.tar.gz", env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = (part.decode() for part in await asyncio.wait_for(process.communicate(), 30))
    assert process.returncode == 0, err
    written, env_line = out.strip().splitlines()
    # The whole path, so a backup made from a relative name can still be found.
    assert written == f"wrote {tmp_path / 'b.tar.gz'}: {HOLDS}", written
    assert env_line.startswith(ENV_LEFT_OUT) and "keep" in env_line, env_line


async def test_restore_says_what_it_restored_and_that_env_is_left_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_home(home)
    archive = tmp_path / "b.tar.gz"
    assert (await augure("backup", str(archive), env=environment(home)))[0] == 0
    fresh = tmp_path / "fresh"
    code, out, err = await augure("restore", str(archive), env=environment(fresh))
    assert code == 0, err
    restored, env_line = out.strip().splitlines()
    assert restored == f"restored {HOLDS} from {archive} into {fresh}", restored
    assert env_line.startswith(ENV_LEFT_OUT) and str(fresh) in env_line, env_line


@pytest.mark.parametrize("where", ["under a file", "in /proc"])
async def test_backup_to_a_place_it_cannot_write_is_one_line(tmp_path: Path, where: str) -> None:
    home = tmp_path / "home"
    (home / "memory").mkdir(parents=True)
    (tmp_path / "a-file").write_text("not a folder")
    target = tmp_path / "a-file" / "x.tar.gz" if where == "under a file" else Path("/proc/x.tar.gz")
    code, out, err = await augure("backup", str(target), env=environment(home))
    assert code == 1, (out, err)
    assert "Traceback" not in err, err
    assert err.count("\n") == 1, err
    assert f"cannot write {target}" in err, err
