"""Where skills live: files under `skills/<id>/`, state and run history in SQLite."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from augure.common import data_files
from augure.skills.model import (
    FILES,
    SKILL_MD,
    SKILL_PY,
    SkillError,
    SkillMeta,
    check_id,
    parse_skill_md,
    plain_file_name,
)
from augure.store.state import Store

log = logging.getLogger(__name__)

STAGING = ".staging"  # an update is tested here before it replaces the installed folder
COLUMNS = "id, state, version, source, failures, reason, updated_at, hub, revision"
CATALOG_KEY = "skills catalog"  # in the settings table: the prompt's section and its sources
# The catalog's heading; changing it (or how a line is made) makes every kept catalog stale.
CATALOG_HEADING = "# Skills (run one with run_skill when it fits the request)"


def bundled_dir() -> Path | None:
    """The bundled `skills/`: beside the package in a checkout, or installed as data."""
    for candidate in data_files.candidates("skills"):
        if candidate.is_dir() and any(candidate.glob(f"*/{SKILL_MD}")):
            return candidate
    return None


@dataclass(frozen=True)
class SkillRecord:
    id: str
    state: str
    version: str
    source: str  # bundled, generated, hub
    failures: int
    reason: str | None
    updated_at: float
    hub: str | None = None  # the hub entry it was installed from
    revision: str | None = None  # a GitHub hub's commit, pinned


@dataclass(frozen=True)
class SkillRun:
    id: int
    skill_id: str
    origin: str
    started_at: float
    finished_at: float | None
    outcome: str | None
    output: str | None
    calls: list[str]


class SkillListing(NamedTuple):
    """One skill as the listings show it (`list_skills`, /skills, `augure skills list`)."""

    record: SkillRecord
    meta: SkillMeta | None
    last_run: str


class SkillStore:
    def __init__(self, root: Path, store: Store) -> None:
        self.root = root
        self.db = store.db

    # -- files ---------------------------------------------------------------------------

    def folder(self, skill_id: str) -> Path:
        return self.root / check_id(skill_id)

    def exists(self, skill_id: str) -> bool:
        return (self.folder(skill_id) / SKILL_MD).is_file()

    def read(self, skill_id: str, name: str) -> str | None:
        if name not in FILES:
            raise SkillError(f"unknown skill file {name!r}")
        path = self.folder(skill_id) / name
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_text(encoding="utf-8", errors="replace")

    def meta(self, skill_id: str) -> SkillMeta:
        text = self.read(skill_id, SKILL_MD)
        if text is None:
            raise SkillError(f"no skill {skill_id!r}")
        return parse_skill_md(text, skill_id)

    def code(self, skill_id: str) -> str | None:
        return self.read(skill_id, SKILL_PY)

    def write(
        self,
        skill_id: str,
        files: dict[str, bytes],
        *,
        staging: bool = False,
        companions: bool = False,
    ) -> Path:
        """Write exactly `files` (names from FILES; with `companions`, also the plain paths of
        an Agent Skills folder) into a fresh folder; returns it."""
        target = self.root / STAGING / check_id(skill_id) if staging else self.folder(skill_id)
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name, content in files.items():
            if name not in FILES and not (companions and plain_file_name(name)):
                raise SkillError(f"a skill holds only {', '.join(FILES)}, not {name!r}")
            path = target / name
            path.parent.mkdir(parents=True, exist_ok=True)
            # Never executable, whatever mode the hub gave it: a script runs only through
            # sandbox_exec, which asks (docs/reference/skills.md#hubs).
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "wb") as out:
                out.write(content)
        return target

    def promote(self, skill_id: str) -> None:
        """Replace the installed folder with the staged one (tested first)."""
        staged = self.root / STAGING / check_id(skill_id)
        target = self.folder(skill_id)
        old = self.root / STAGING / f"{skill_id}.old"
        if old.exists():
            shutil.rmtree(old)
        if target.exists():
            os.replace(target, old)
        os.replace(staged, target)
        if old.exists():
            shutil.rmtree(old)

    def remove_files(self, skill_id: str) -> None:
        folder = self.folder(skill_id)
        if folder.exists():
            shutil.rmtree(folder)

    def files(self, skill_id: str) -> dict[str, bytes]:
        folder = self.folder(skill_id)
        return {
            name: (folder / name).read_bytes()
            for name in FILES
            if (folder / name).is_file() and not (folder / name).is_symlink()
        }

    def companions(self, skill_id: str) -> dict[str, bytes]:
        """The skill's other files (scripts/, references/, assets), by path in its folder."""
        folder = self.folder(skill_id)
        if not folder.is_dir():
            return {}
        found = {}
        for path in sorted(folder.rglob("*")):
            name = path.relative_to(folder).as_posix()
            if name in FILES or path.is_symlink() or not path.is_file():
                continue
            if plain_file_name(name):
                found[name] = path.read_bytes()
        return found

    # -- state ---------------------------------------------------------------------------

    async def record(self, skill_id: str) -> SkillRecord | None:
        row = await self.db.fetchone(
            f"SELECT {COLUMNS} FROM skills WHERE id = ?",
            (check_id(skill_id),),
        )
        return SkillRecord(*row) if row else None

    async def records(self) -> list[SkillRecord]:
        return [
            SkillRecord(*row)
            for row in await self.db.fetchall(f"SELECT {COLUMNS} FROM skills ORDER BY id")
        ]

    async def existing(self, skill_id: str) -> SkillRecord:
        """The record of a skill that has one and its SKILL.md, else SkillError."""
        record = await self.record(skill_id)
        if record is None or not self.exists(skill_id):
            raise SkillError(f"no skill {skill_id!r}; see list_skills")
        return record

    async def listing(self) -> list[SkillListing]:
        """Every skill: its record, its parsed SKILL.md (None when it does not parse) and its
        last run's outcome."""
        result = []
        for record in await self.records():
            try:
                meta: SkillMeta | None = self.meta(record.id)
            except SkillError:
                meta = None
            runs = await self.runs(record.id, 1)
            last = f"{runs[0].outcome or 'running'}" if runs else "never run"
            result.append(SkillListing(record, meta, last))
        return result

    async def describe(self, skill_id: str, max_failures: int) -> str:
        record = await self.existing(skill_id)
        meta = self.meta(skill_id)
        when = f"cron `{meta.schedule}`" if meta.trigger == "cron" else "manual"
        lines = [
            f"{skill_id} {record.version} — {record.state} ({record.source}), {when}",
            *([f"hub: {record.hub}"] if record.hub else []),
            *([f"commit: {record.revision}"] if record.revision else []),
            meta.description,
            f"tools: {', '.join(meta.tools) or 'none'}; tags: {', '.join(meta.tags) or 'none'}",
            f"failures: {record.failures}/{max_failures}"
            + (f"; reason: {record.reason}" if record.reason else ""),
            "code skill (skill.py)" if self.code(skill_id) else "instruction skill",
        ]
        runs = await self.runs(skill_id, 5)
        lines += [f"run {r.id} ({r.origin}): {r.outcome or 'running'}" for r in runs]
        return "\n".join(lines)

    async def catalog(self) -> str:
        """The prompt's skills section: id and one-line description of each active skill.

        Kept in state.db with what it was made from (each active skill's SKILL.md: its size
        and time), so a start whose skills did not change parses no SKILL.md and loads no YAML
        parser (docs/performance.md); an edited, added or removed skill makes it anew."""
        active = [record.id for record in await self.records() if record.state == "active"]
        stamps = [[skill_id, *self._stamp(skill_id)] for skill_id in active]
        made_from = json.dumps([CATALOG_HEADING, stamps])
        kept = await self.setting(CATALOG_KEY)
        if kept is not None:
            earlier = json.loads(kept)
            if earlier.get("made_from") == made_from:
                return str(earlier["text"])
        text = self._catalog(active)
        await self.set_setting(CATALOG_KEY, json.dumps({"made_from": made_from, "text": text}))
        return text

    def _stamp(self, skill_id: str) -> tuple[int, int]:
        """SKILL.md's modification time (ns) and size; (0, -1) when it cannot be read."""
        path = self.folder(skill_id) / SKILL_MD
        try:
            found = path.lstat()
        except OSError:
            return 0, -1
        return found.st_mtime_ns, found.st_size

    def _catalog(self, active: list[str]) -> str:
        lines = []
        for skill_id in active:
            try:
                lines.append(f"- {skill_id}: {self.meta(skill_id).description}")
            except SkillError:
                continue
        if not lines:
            return ""
        return CATALOG_HEADING + "\n" + "\n".join(lines)

    async def watch(self, on_change: Callable[[], Awaitable[None]], every: float) -> None:
        """Call `on_change` when the skills table changes (e.g. from another process)."""
        seen = await self.signature()
        while True:
            await asyncio.sleep(every)
            try:
                now = await self.signature()
                if now != seen:
                    seen = now
                    await on_change()
            except Exception as exc:  # the next round tries again
                log.warning("could not refresh the skills catalog: %s", exc)

    async def signature(self) -> tuple[int, float]:
        """Changes whenever a skill is added, removed or changes state."""
        row = await self.db.fetchone("SELECT COUNT(*), COALESCE(MAX(updated_at), 0) FROM skills")
        return (int(row[0]), float(row[1])) if row else (0, 0.0)

    async def put(
        self,
        skill_id: str,
        *,
        state: str,
        version: str,
        source: str,
        reason: str | None = None,
        hub: str | None = None,
        revision: str | None = None,
    ) -> None:
        """Create or replace the record; a new version starts with no failures."""
        now = time.time()
        await self.db.execute(
            "INSERT INTO skills (id, state, version, source, failures, reason, created_at, "
            "updated_at, hub, revision) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET state = excluded.state, version = excluded.version, "
            "source = excluded.source, failures = 0, reason = excluded.reason, "
            "updated_at = excluded.updated_at, hub = excluded.hub, revision = excluded.revision",
            (check_id(skill_id), state, version, source, reason, now, now, hub, revision),
        )

    async def set_state(self, skill_id: str, state: str, reason: str | None = None) -> None:
        await self.db.execute(
            "UPDATE skills SET state = ?, reason = ?, updated_at = ? WHERE id = ?",
            (state, reason, time.time(), check_id(skill_id)),
        )

    async def set_failures(self, skill_id: str, failures: int) -> None:
        await self.db.execute(
            "UPDATE skills SET failures = ?, updated_at = ? WHERE id = ?",
            (failures, time.time(), check_id(skill_id)),
        )

    async def forget(self, skill_id: str) -> None:
        skill_id = check_id(skill_id)

        def forget(connection: sqlite3.Connection) -> None:
            connection.execute("DELETE FROM skills WHERE id = ?", (skill_id,))
            connection.execute("DELETE FROM skill_runs WHERE skill_id = ?", (skill_id,))

        await self.db.write(forget)

    # -- runs ----------------------------------------------------------------------------

    async def run_started(self, skill_id: str, origin: str) -> int:
        cursor = await self.db.execute(
            "INSERT INTO skill_runs (skill_id, origin, started_at) VALUES (?, ?, ?)",
            (skill_id, origin, time.time()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    async def run_finished(self, run_id: int, outcome: str, output: str, calls: list[str]) -> None:
        await self.db.execute(
            "UPDATE skill_runs SET finished_at = ?, outcome = ?, output = ?, calls = ? "
            "WHERE id = ?",
            (time.time(), outcome, output, json.dumps(calls), run_id),
        )

    async def runs(self, skill_id: str, limit: int = 10) -> list[SkillRun]:
        rows = await self.db.fetchall(
            "SELECT id, skill_id, origin, started_at, finished_at, outcome, output, calls "
            "FROM skill_runs WHERE skill_id = ? ORDER BY id DESC LIMIT ?",
            (check_id(skill_id), limit),
        )
        return [_run(row) for row in rows]

    async def calls_since(self, chat_id: str, since: float) -> list[str]:
        """The tool calls a turn in `chat_id` made since `since`, from the audit trail."""
        return [
            f"{tool} → {status}"
            for tool, status in await self.db.fetchall(
                "SELECT tool, status FROM invocations WHERE chat_id = ? AND created_at >= ? "
                "ORDER BY created_at, rowid",
                (chat_id, since),
            )
        ]

    async def setting(self, key: str) -> str | None:
        row = await self.db.fetchone("SELECT value FROM settings WHERE key = ?", (key,))
        return str(row[0]) if row else None

    async def set_setting(self, key: str, value: str) -> None:
        await self.db.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def _run(row: Any) -> SkillRun:
    calls = json.loads(row[7]) if row[7] else []
    return SkillRun(row[0], row[1], row[2], row[3], row[4], row[5], row[6], calls)
