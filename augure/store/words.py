"""Where a chat's words reach, and what forgetting the chat does to each place
(docs/recall.md#forgetting).

`TABLES` names every table of state.db; a unit test fails when the schema has one it does
not name, so a new table cannot be missed by `augure forget --chat`. `FILES` does the same
for the home's top-level entries. A chat's words are removed in one transaction; then the
full-text index is merged (its old segments would keep the words), the file is rewritten
(`VACUUM`: no free page or free space in a page keeps a copy made before `secure_delete`
was on) and the WAL is checkpointed and truncated, so no byte of `state.db*` holds them.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from augure.common.folders import workspace_name
from augure.store.archive import searchable
from augure.store.connection import Database

# What a forgotten message of a closed conversation says instead.
FORGOTTEN = "[forgotten by the owner]"
# Every statement below reads the forgotten chats from `:chats` (a JSON list of chat ids):
# the chat itself and the conversations its scheduled jobs ran in (`job:ID`).
_CHATS = "chats(id) AS (SELECT value FROM json_each(:chats))"
# A chat's tool calls: those of its turns, their sub-calls (a batch's, a snippet's), and the
# calls its background tasks made.
_CALLS = (
    f"WITH RECURSIVE {_CHATS}, calls(id) AS ("
    "SELECT id FROM invocations WHERE chat_id IN chats "
    "OR turn_id IN (SELECT t.id FROM turns t WHERE t.chat_id IN chats) "
    "OR id IN (SELECT invocation FROM tasks WHERE chat_id IN chats) "
    "UNION SELECT i.id FROM invocations i JOIN calls c ON i.parent = c.id) "
)


@dataclass(frozen=True)
class Wiped:
    """The chat's rows are deleted, or their words blanked, by these statements (in the
    registry's order)."""

    statements: tuple[str, ...]


@dataclass(frozen=True)
class Kept:
    """Forgetting leaves this as it is, for the reason given."""

    why: str


TABLES: dict[str, Wiped | Kept] = {
    # The audit trail keeps that a call happened, when, and who allowed it; its words go.
    "invocations": Wiped(
        (
            _CALLS + "UPDATE invocations SET input = '{}', output = NULL, target = NULL, "
            "error = NULL, reason = NULL WHERE id IN calls",
        )
    ),
    "tasks": Wiped((f"WITH {_CHATS} DELETE FROM tasks WHERE chat_id IN chats",)),
    "turns": Wiped((f"WITH {_CHATS} DELETE FROM turns WHERE chat_id IN chats",)),
    # A run's row stays: it marks that slot as run. An undelivered reply is not delivered.
    "job_runs": Wiped(
        (
            f"WITH {_CHATS} UPDATE job_runs SET reply = NULL, "
            "status = CASE status WHEN 'done' THEN 'forgotten' ELSE status END "
            "WHERE chat_id IN chats AND (reply IS NOT NULL OR status = 'done')",
        )
    ),
    "inbox": Wiped((f"WITH {_CHATS} DELETE FROM inbox WHERE chat_id IN chats",)),
    # Whole updates held while the bot handles them (moments): those from the chat go.
    "parked_updates": Wiped(
        (
            f"WITH {_CHATS} DELETE FROM parked_updates WHERE CAST(COALESCE("
            "json_extract(body, '$.message.chat.id'), "
            "json_extract(body, '$.edited_message.chat.id'), "
            "json_extract(body, '$.callback_query.message.chat.id')) AS TEXT) IN chats",
        )
    ),
    "messages": Wiped(
        (
            f"WITH {_CHATS} DELETE FROM messages WHERE conversation_id IN "
            "(SELECT id FROM conversations WHERE chat_id IN chats)",
        )
    ),
    "conversations": Wiped((f"WITH {_CHATS} DELETE FROM conversations WHERE chat_id IN chats",)),
    "archive_vectors": Wiped(
        (
            f"WITH {_CHATS} DELETE FROM archive_vectors WHERE archive_id IN "
            "(SELECT id FROM archive WHERE chat_id IN chats)",
        )
    ),
    # Its trigger takes each row out of the index.
    "archive": Wiped((f"WITH {_CHATS} DELETE FROM archive WHERE chat_id IN chats",)),
    # A delete only adds a tombstone to the index; merging every segment drops the words.
    "archive_index": Wiped(("INSERT INTO archive_index (archive_index) VALUES ('optimize')",)),
    "archive_index_data": Kept("the index's own storage, rewritten by its 'optimize'"),
    "archive_index_idx": Kept("the index's own storage, rewritten by its 'optimize'"),
    "archive_index_docsize": Kept("the index's own storage: sizes only"),
    "archive_index_config": Kept("the index's own settings"),
    "archive_terms": Kept("a view of the index's words, no storage of its own"),
    "jobs": Kept(
        "scheduled jobs are standing instructions: the command names the chat's, "
        "`augure jobs remove ID` removes one"
    ),
    "skills": Kept("installed skills: no chat's words"),
    "skill_runs": Kept("a skill's own runs, removed with the skill"),
    "memory_vectors": Kept("vectors of the memory files, which the owner edits"),
    "usage": Kept("token counts only"),
    "model_calls": Kept("token counts and costs only"),
    "spend_totals": Kept("spend per period only"),
    "budget_notices": Kept("when a spend notice was sent"),
    "limit_use": Kept("counts of calls a tool limit saw"),
    "rules": Kept("approval rules the owner made"),
    "settings": Kept("per-chat settings (a persona's name) and pending forget requests"),
    "taken_updates": Kept("Telegram update ids and a digest of each"),
    "sqlite_sequence": Kept("SQLite's counters"),
}

# The home's top-level entries, and what forgetting a chat does to each.
FILES: dict[str, Wiped | Kept] = {
    "state.db": Wiped(("the tables above",)),
    "state.db-wal": Wiped(("checkpointed and truncated",)),
    "state.db-shm": Kept("the WAL's index: page numbers, no content"),
    "outputs": Wiped(("the saved output of each of the chat's tool calls",)),
    "inbox": Kept("files the owner sent in their chat (the owner's documents)"),
    "inboxes": Wiped(("a guest chat's documents, inboxes/CHAT",)),
    "workspaces": Wiped(("the chat's working files, workspaces/CHAT",)),
    "memory": Kept("the memory notes, which the owner edits"),
    "skills": Kept("installed skills"),
    "logs": Kept("events, not messages (debug logging may quote requests: said in docs)"),
    "backups": Kept("backups made before: they still hold the words"),
    "augure.toml": Kept("the configuration"),
    "augure.lock": Kept("the running bot's pid"),
}


@dataclass
class Forgotten:
    """What a forget removed, for the command to report."""

    messages: int = 0
    archived: int = 0
    calls: int = 0
    tasks: int = 0
    job_replies: int = 0
    outputs: int = 0
    kept_jobs: list[str] = field(default_factory=list)
    call_ids: list[str] = field(default_factory=list, repr=False)

    def as_json(self) -> dict[str, object]:
        return {
            "messages": self.messages,
            "archived": self.archived,
            "calls": self.calls,
            "tasks": self.tasks,
            "job_replies": self.job_replies,
            "outputs": self.outputs,
            "kept_jobs": self.kept_jobs,
        }


_COUNTED = {
    "messages": "messages",
    "archive": "archived",
    "invocations": "calls",
    "tasks": "tasks",
    "job_runs": "job_replies",
}


def _chats(connection: sqlite3.Connection, chat_id: str) -> str:
    """The chat and the conversations its jobs ran in, as the statements' JSON list."""
    jobs = connection.execute(
        "SELECT id FROM jobs WHERE chat_id = ? UNION SELECT job_id FROM job_runs WHERE chat_id = ?",
        (chat_id, chat_id),
    ).fetchall()
    return json.dumps([chat_id, *(f"job:{row[0]}" for row in jobs)])


def wipe_chat(connection: sqlite3.Connection, chat_id: str) -> Forgotten:
    """Inside the caller's transaction: every row of `TABLES` the chat's words reach."""
    chats = {"chats": _chats(connection, chat_id)}
    forgotten = Forgotten()
    found = connection.execute(_CALLS + "SELECT id FROM calls", chats)
    forgotten.call_ids = [row[0] for row in found]
    forgotten.kept_jobs = [
        row[0] for row in connection.execute("SELECT id FROM jobs WHERE chat_id = ?", (chat_id,))
    ]
    for table, treatment in TABLES.items():
        if isinstance(treatment, Kept):
            continue
        for statement in treatment.statements:
            connection.execute(statement, chats)
            # Not `rowcount`: Python 3.11's sqlite3 gives -1 for a statement begun by WITH.
            changed = connection.execute("SELECT changes()").fetchone()[0]
            if table in _COUNTED:
                counted = _COUNTED[table]
                setattr(forgotten, counted, getattr(forgotten, counted) + changed)
    return forgotten


async def running_work(db: Database, chat_id: str) -> list[str]:
    """What of the chat is still under way (a background task, a job's run, a call waiting
    for its approval): it would write its words after a forget."""

    def find(connection: sqlite3.Connection) -> list[str]:
        chats = {"chats": _chats(connection, chat_id)}
        return [
            row[0]
            for row in connection.execute(
                f"WITH {_CHATS} SELECT 'task ' || id FROM tasks "
                "WHERE chat_id IN chats AND status = 'running' "
                "UNION ALL SELECT 'job ' || job_id FROM job_runs "
                "WHERE chat_id IN chats AND status = 'running' "
                "UNION ALL SELECT 'call ' || id || ' (waiting for approval)' FROM invocations "
                "WHERE chat_id IN chats AND approval_status = 'pending'",
                chats,
            )
        ]

    return await db.read(find)


def drop_outputs(home: Path, calls: list[str]) -> int:
    """The saved outputs of these calls (tools/outputs.py names them by the call's id)."""
    removed = 0
    for call in calls:
        for suffix in (".txt", ".source"):
            path = home / "outputs" / f"{call}{suffix}"
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += suffix == ".txt"
    return removed


async def forget_chat(
    db: Database,
    home: Path,
    chat_id: str,
    also: Callable[[sqlite3.Connection, Forgotten], None] = lambda _c, _f: None,
) -> Forgotten:
    """Forget a chat everywhere: the rows in one transaction (with `also`, the caller's own
    record of it), then the files, then no copy left in the database files. Run again
    after a crash, it finishes what the crash cut off."""

    def wipe(connection: sqlite3.Connection) -> Forgotten:
        forgotten = wipe_chat(connection, chat_id)
        also(connection, forgotten)
        return forgotten

    forgotten = await db.write(wipe)
    forgotten.outputs = drop_outputs(home, forgotten.call_ids)
    for folder in ("inboxes", "workspaces"):  # the chat's own files
        shutil.rmtree(home / folder / workspace_name(chat_id), ignore_errors=True)
    await scrub(db)
    return forgotten


async def forget_entry(db: Database, entry_id: int) -> bool:
    """One archived message, its vector and its words in the index, and the message itself
    in a closed conversation; no copy left in the database files. (An open conversation is
    the running bot's live history, which it holds in memory: it keeps its copy.)"""

    def delete(connection: sqlite3.Connection) -> bool:
        entry = connection.execute(
            "SELECT a.conversation_id, a.role, a.text, c.closed_at FROM archive a "
            "LEFT JOIN conversations c ON c.id = a.conversation_id WHERE a.id = ?",
            (entry_id,),
        ).fetchone()
        if entry is None:
            return False
        if entry["closed_at"] is not None:
            _blank_message(connection, entry["conversation_id"], entry["role"], entry["text"])
        connection.execute("DELETE FROM archive_vectors WHERE archive_id = ?", (entry_id,))
        connection.execute("DELETE FROM archive WHERE id = ?", (entry_id,))
        connection.execute("INSERT INTO archive_index (archive_index) VALUES ('optimize')")
        return True

    removed = await db.write(delete)
    await scrub(db)
    return removed


def _blank_message(connection: sqlite3.Connection, conversation: int, role: str, text: str) -> None:
    """The conversation's messages the archived `text` was made from lose their words; a
    call keeps its id (its result still answers it), not its arguments."""
    rows = connection.execute(
        "SELECT id, content, content_format, tool_calls FROM messages "
        "WHERE conversation_id = ? AND role = ?",
        (conversation, role),
    ).fetchall()
    for row in rows:
        content = row["content"]
        message = {
            "role": role,
            "content": json.loads(content) if row["content_format"] else content,
        }
        calls = json.loads(row["tool_calls"]) if row["tool_calls"] else []
        if calls:
            message["tool_calls"] = calls
        if (searchable(message) or ("",))[0] != text:
            continue
        blanked = [{**call, "function": {**call["function"], "arguments": "{}"}} for call in calls]
        connection.execute(
            "UPDATE messages SET content = ?, content_format = NULL, tool_calls = ? WHERE id = ?",
            (FORGOTTEN, json.dumps(blanked) if blanked else None, row["id"]),
        )


async def scrub(db: Database) -> None:
    """Rewrite state.db from its live rows and empty its WAL: what was deleted is in no
    page of either (connections delete with `secure_delete` on; this covers what was
    deleted before)."""
    await db.outside_transaction(lambda connection: connection.execute("VACUUM"))
    await db.outside_transaction(_checkpoint)


def _checkpoint(connection: sqlite3.Connection) -> None:
    busy = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    if busy:  # a reader of another process holds the WAL: retried like any lock
        raise sqlite3.OperationalError("database is locked (a reader holds the WAL)")
