"""Every table of state.db and every entry of the home says what `augure forget --chat`
does to it (docs/recall.md#forgetting): a table added by a migration without a word there
fails here, instead of keeping a forgotten chat's words."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from augure.store.connection import Database
from augure.store.migrations import MIGRATIONS
from augure.store.state import Store
from augure.store.words import TABLES, Kept, Wiped, forget_chat


async def _tables(path: Path, migrations: Sequence[str]) -> set[str]:
    """The tables of the schema after every migration, as SQLite lists them."""
    db = await Database.open(path, migrations)
    try:
        rows = await db.fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")
    finally:
        await db.close()
    return {row[0] for row in rows}


async def test_every_table_of_the_schema_says_what_forget_does_to_it(tmp_path: Path) -> None:
    tables = await _tables(tmp_path / "state.db", MIGRATIONS)
    assert sorted(tables - set(TABLES)) == []
    assert sorted(set(TABLES) - tables) == []  # no entry for a table that is gone
    assert all(isinstance(t, Wiped) or t.why for t in TABLES.values())


async def test_a_new_table_without_an_entry_is_caught(tmp_path: Path) -> None:
    added = "CREATE TABLE notes (chat_id TEXT NOT NULL, text TEXT NOT NULL);"
    tables = await _tables(tmp_path / "state.db", [*MIGRATIONS, added])
    assert sorted(tables - set(TABLES)) == ["notes"]


async def test_forgetting_a_chat_of_an_empty_home_runs_every_statement(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    try:
        forgotten = await forget_chat(store.db, tmp_path, "1")
    finally:
        await store.close()
    assert forgotten.as_json() == {
        "messages": 0, "archived": 0, "calls": 0, "tasks": 0, "job_replies": 0, "outputs": 0,
        "kept_jobs": [],
    }  # fmt: skip
    assert isinstance(TABLES["jobs"], Kept)
