"""Every table of state.db and every entry of the home says what `augure forget --chat`
does to it (docs/recall.md#forgetting): a table added by a migration without a word there
fails here, instead of keeping a forgotten chat's words."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from augure.store.archive import Archive, Window
from augure.store.connection import Database
from augure.store.migrations import MIGRATIONS
from augure.store.state import Store
from augure.store.words import (
    FILES,
    FORGOTTEN,
    TABLES,
    Kept,
    Wiped,
    forget_chat,
    forget_entry,
)


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


def _raw(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.name.startswith("state.db"))


async def test_forgetting_one_message_of_a_closed_conversation_leaves_no_byte(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "state.db")
    try:
        conversation = await store.open_conversation("1")
        said = [
            {"role": "user", "content": "my locker code is zanzibarite"},
            {"role": "user", "content": "and the gym opens at six"},
        ]
        await store.add_messages(conversation, said)
        await store.close_conversation("1")
        [entry] = await Archive(store.db).search("zanzibarite", Window(), 5)
        assert await forget_entry(store.db, entry.id)
        kept = await store.messages(conversation)
        assert b"zanzibarite" not in _raw(tmp_path)
        assert [m["content"] for m in kept] == [FORGOTTEN, "and the gym opens at six"]
    finally:
        await store.close()


async def test_words_deleted_before_secure_delete_was_on_are_gone_after_a_forget(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    await (await Store.open(path)).close()
    # A home of an earlier version: a message left the inbox, its bytes stayed in the page.
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA secure_delete=OFF")
        connection.execute(
            "INSERT INTO inbox (chat_id, content, received_at) VALUES ('1', 'pin quasarlemon', 0)"
        )
        connection.commit()
        connection.execute("DELETE FROM inbox")
        connection.commit()
    assert b"quasarlemon" in _raw(tmp_path)
    store = await Store.open(path)
    try:
        await forget_chat(store.db, tmp_path, "1")
    finally:
        await store.close()
    assert b"quasarlemon" not in _raw(tmp_path)


async def test_forgetting_a_guest_chat_removes_its_inbox_and_workspace(tmp_path: Path) -> None:
    """A guest's documents (inboxes/CHAT) and the chat's working files (workspaces/CHAT) are
    the chat's own: forgetting the chat removes them, and nobody else's."""
    for chat in ("42", "43"):
        (tmp_path / "inboxes" / chat).mkdir(parents=True)
        (tmp_path / "inboxes" / chat / "plan.txt").write_text(f"plan of {chat}")
        (tmp_path / "workspaces" / chat).mkdir(parents=True)
        (tmp_path / "workspaces" / chat / "notes.md").write_text(f"notes of {chat}")
    store = await Store.open(tmp_path / "state.db")
    try:
        await forget_chat(store.db, tmp_path, "42")
    finally:
        await store.close()
    assert not (tmp_path / "inboxes" / "42").exists()
    assert not (tmp_path / "workspaces" / "42").exists()
    assert (tmp_path / "inboxes" / "43" / "plan.txt").read_text() == "plan of 43"
    assert (tmp_path / "workspaces" / "43" / "notes.md").read_text() == "notes of 43"
    assert isinstance(FILES["inboxes"], Wiped) and isinstance(FILES["workspaces"], Wiped)


async def test_a_parked_update_of_the_chat_is_forgotten_and_another_chats_kept(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "state.db")
    try:
        for update_id, chat in ((1, 42), (2, 43)):
            message = {"chat": {"id": chat}, "text": "t"}
            body = json.dumps({"update_id": update_id, "message": message})
            await store.db.execute(
                "INSERT INTO parked_updates (update_id, digest, body, parked_at) "
                "VALUES (?, 'd', ?, 0)",
                (update_id, body),
            )
        await forget_chat(store.db, tmp_path, "42")
        left = await store.db.fetchall("SELECT update_id FROM parked_updates")
    finally:
        await store.close()
    assert [row[0] for row in left] == [2]
