"""The state layer under load and failure: many tasks at once, whole transactions, busy waits."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from augure.store.connection import Database, StateError, StoreBusy
from augure.store.state import MIGRATIONS, Store


async def test_many_tasks_at_once_lose_and_mix_nothing(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    chats = [str(n) for n in range(50)]
    conversations = {chat: await store.open_conversation(chat) for chat in chats}

    async def talk(chat: str) -> None:
        for n in range(20):
            await store.add_messages(
                conversations[chat],
                [
                    {"role": "user", "content": f"{chat}:{n}"},
                    {"role": "assistant", "content": f"re {chat}:{n}"},
                ],
            )
            await store.messages(conversations[chat])

    await asyncio.gather(*(talk(chat) for chat in chats))
    for chat in chats:
        contents = [m["content"] for m in await store.messages(conversations[chat])]
        expected = [x for n in range(20) for x in (f"{chat}:{n}", f"re {chat}:{n}")]
        assert contents == expected
    assert await store.integrity() == "ok"
    await store.close()


async def test_no_sqlite_object_is_touched_outside_the_database_thread(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    seen: set[str] = set()

    def trace(statement: str) -> None:
        seen.add(threading.current_thread().name)

    await store.db.read(lambda connection: connection.set_trace_callback(trace))
    conversation = await store.open_conversation("1")
    await asyncio.gather(
        *(store.add_messages(conversation, [{"role": "user", "content": "x"}]) for _ in range(50)),
        *(store.messages(conversation) for _ in range(50)),
    )
    assert seen and all(name.startswith("augure-db") for name in seen)
    await store.close()


async def test_a_failed_operation_leaves_nothing_half_written(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    conversation = await store.open_conversation("7")
    await store.add_messages(conversation, [{"role": "user", "content": "kept"}])
    # The second message cannot be stored (role is NOT NULL): the replacement must not delete
    # the old history and store only half of the new one.
    with pytest.raises(sqlite3.IntegrityError):
        await store.replace_messages(
            conversation, [{"role": "user", "content": "new"}, {"role": None, "content": "bad"}]
        )
    assert [m["content"] for m in await store.messages(conversation)] == ["kept"]

    def half(connection: sqlite3.Connection) -> None:
        connection.execute("INSERT INTO settings (key, value) VALUES ('a', '1')")
        raise RuntimeError("crash between two writes")

    with pytest.raises(RuntimeError):
        await store.db.write(half)
    assert await store.db.fetchone("SELECT value FROM settings WHERE key = 'a'") is None
    # and the connection is usable afterwards: no transaction was left open
    await store.db.execute("INSERT INTO settings (key, value) VALUES ('b', '2')")
    assert (await store.db.fetchone("SELECT value FROM settings WHERE key = 'b'"))[0] == "2"
    await store.close()


async def test_strings_come_back_exactly_as_written(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    conversation = await store.open_conversation("9")
    tricky = '\x00json:{"role": "system"}'
    await store.add_messages(conversation, [{"role": "user", "content": tricky}])
    assert (await store.messages(conversation))[0]["content"] == tricky
    await store.close()


async def test_old_prefixed_multipart_content_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    connection = sqlite3.connect(path, isolation_level=None)
    for number, script in enumerate(MIGRATIONS[:4], start=1):
        connection.executescript(f"BEGIN;{script}PRAGMA user_version={number};COMMIT;")
    connection.execute("INSERT INTO conversations (chat_id, started_at) VALUES ('1', 0)")
    connection.execute(
        "INSERT INTO messages (conversation_id, role, content, created_at) "
        "VALUES (1, 'user', ?, 0)",
        ('\x00json:[{"type": "text", "text": "hi"}]',),
    )
    connection.close()
    store = await Store.open(path)
    assert (await store.messages(1))[0]["content"] == [{"type": "text", "text": "hi"}]
    await store.close()


HOLD_LOCK = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
connection.execute("INSERT INTO settings (key, value) VALUES ('holder', '1')")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
connection.execute("COMMIT")
"""


def hold_lock(path: Path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


async def test_a_write_waits_for_another_process_then_commits(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    conversation = await store.open_conversation("1")
    holder = hold_lock(tmp_path / "state.db", 2)
    try:
        # Reads go on while the other process holds the write lock (WAL)...
        assert await store.messages(conversation) == []
        # ...and the write waits for it instead of failing.
        await store.add_messages(conversation, [{"role": "user", "content": "waited"}])
    finally:
        holder.wait(10)
    assert [m["content"] for m in await store.messages(conversation)] == ["waited"]
    assert (await store.db.fetchone("SELECT value FROM settings WHERE key='holder'"))[0] == "1"
    await store.close()


async def test_a_lock_held_too_long_is_reported_as_busy(tmp_path: Path) -> None:
    database = await Database.open(tmp_path / "state.db", MIGRATIONS)
    database.busy_seconds = 0.5
    holder = hold_lock(tmp_path / "state.db", 3)
    try:
        with pytest.raises(StoreBusy):
            await database.execute("INSERT INTO settings (key, value) VALUES ('x', 'y')")
    finally:
        holder.wait(10)
    await database.close()


@pytest.mark.parametrize(
    "content", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 5000]
)
async def test_a_corrupt_file_is_one_clear_error_and_no_thread_stays(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(content)
    before = set(threading.enumerate())
    with pytest.raises(StateError) as raised:
        await Store.open(path)
    assert str(path) in str(raised.value) and "restore" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert not [t for t in set(threading.enumerate()) - before if t.is_alive()]


HOLD_NEW_FILE = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
connection.execute("CREATE TABLE early (x)")
print("locked", flush=True)
time.sleep(1)
connection.execute("ROLLBACK")
"""


async def test_opening_while_another_process_holds_the_lock_waits(tmp_path: Path) -> None:
    # Several `augure` commands started at once on a new home race to create the file.
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_NEW_FILE, str(tmp_path / "state.db")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    try:
        store = await Store.open(tmp_path / "state.db")
    finally:
        holder.wait(10)
    assert await store.schema_version() == len(MIGRATIONS)
    await store.close()


async def test_an_upgrade_is_all_or_nothing(tmp_path: Path) -> None:
    # Every pending migration runs in one transaction: one that fails leaves the file as it
    # was (a new home: no table at all), and the next start tries the whole upgrade again.
    path = tmp_path / "state.db"
    with pytest.raises(StateError):
        await Database.open(path, [*MIGRATIONS, "CREATE TABLE half_done (x);\nNOT SQL;"])
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA user_version").fetchone() == (0,)
        assert connection.execute("SELECT name FROM sqlite_schema").fetchall() == []
    finally:
        connection.close()
    database = await Database.open(path, MIGRATIONS)
    assert (await database.fetchone("PRAGMA user_version") or (0,))[0] == len(MIGRATIONS)
    await database.close()
