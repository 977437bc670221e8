"""SQLite state: conversations, messages, turns, usage. One file, WAL, versioned migrations.

Every access goes through `Database` (connection.py): one thread, one transaction per operation.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from augure.host.home import private_home
from augure.store.archive import archive_messages
from augure.store.connection import Database
from augure.store.inbox import consume
from augure.store.migrations import MIGRATIONS

__all__ = ["MIGRATIONS", "Store", "TurnUsage"]


@dataclass(frozen=True)
class TurnUsage:
    model: str
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    breakdown: dict[str, int]


MessageRow = tuple[int, str, str | None, str | None, str | None, str | None, float]


class Store:
    """The domain operations over state.db; each is one transaction on the database thread."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @classmethod
    async def open(cls, path: Path) -> Store:
        private_home(path.parent)
        return cls(await Database.open(path, MIGRATIONS))

    async def close(self) -> None:
        await self.db.close()

    async def schema_version(self) -> int:
        row = await self.db.fetchone("PRAGMA user_version")
        return int(row[0]) if row else 0

    async def integrity(self) -> str:
        row = await self.db.fetchone("PRAGMA integrity_check")
        return str(row[0]) if row else "no answer"

    # -- conversations -------------------------------------------------------------------

    async def open_conversation(self, chat_id: str) -> int:
        def find_or_create(connection: sqlite3.Connection) -> int:
            return _open_conversation(connection, chat_id)

        return await self.db.write(find_or_create)

    async def close_conversation(self, chat_id: str) -> None:
        await self.db.execute(
            "UPDATE conversations SET closed_at = ? WHERE chat_id = ? AND closed_at IS NULL",
            (time.time(), chat_id),
        )

    async def add_messages(
        self, conversation_id: int, messages: list[dict[str, Any]], received: Sequence[int] = ()
    ) -> None:
        """`received`: the inbox rows of owner messages among them, which leave the inbox in
        the same transaction (augure.store.inbox)."""
        rows = _message_rows(conversation_id, messages)

        def add(connection: sqlite3.Connection) -> None:
            consume(connection, received)
            _insert_messages(connection, rows)
            archive_messages(connection, conversation_id, messages)

        await self.db.write(add)

    async def replace_messages(
        self,
        conversation_id: int,
        messages: list[dict[str, Any]],
        summary_sources: Sequence[str] | None = None,
        *,
        fresh: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Rewrite a conversation (after pruning or compaction): all of it or nothing. With
        `summary_sources`, its first message is a new summary of content from those sources
        (empty: all trusted). The archive keeps what the rewrite drops; `fresh` are the
        rewrite's messages never stored before, archived with it."""
        rows = _message_rows(conversation_id, messages)

        def replace(connection: sqlite3.Connection) -> None:
            connection.execute("DELETE FROM messages WHERE conversation_id = ?", (conversation_id,))
            _insert_messages(connection, rows)
            archive_messages(connection, conversation_id, fresh)
            if summary_sources is not None:
                connection.execute(
                    "UPDATE conversations SET summary_sources = ? WHERE id = ?",
                    (json.dumps(sorted(summary_sources)), conversation_id),
                )

        await self.db.write(replace)

    async def summary_sources(self, conversation_id: int) -> list[str] | None:
        """Where the conversation's summary drew outside content from; None: no summary."""
        row = await self.db.fetchone(
            "SELECT summary_sources FROM conversations WHERE id = ?", (conversation_id,)
        )
        return list(json.loads(row[0])) if row and row[0] is not None else None

    async def messages(self, conversation_id: int) -> list[dict[str, Any]]:
        rows = await self.db.fetchall(
            "SELECT role, content, tool_calls, tool_call_id, content_format FROM messages "
            "WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        )
        result: list[dict[str, Any]] = []
        for row in rows:
            content = row["content"]
            if row["content_format"] == "json":
                content = json.loads(content)
            message: dict[str, Any] = {"role": row["role"], "content": content}
            if row["tool_calls"]:
                message["tool_calls"] = json.loads(row["tool_calls"])
            if row["tool_call_id"]:
                message["tool_call_id"] = row["tool_call_id"]
            result.append(message)
        return result

    # -- turns ---------------------------------------------------------------------------

    async def begin_turn(
        self,
        turn_id: str,
        chat_id: str,
        origin: str,
        conversation_id: int,
        *asked: dict[str, Any],
        received: Sequence[int] = (),
    ) -> None:
        """The owner's messages (several when folded) and the turn that answers them, stored
        in one transaction before the model sees them. `received`: the messages' rows in the
        inbox, which leave it in the same transaction (augure.store.inbox)."""
        rows = _message_rows(conversation_id, list(asked))

        def begin(connection: sqlite3.Connection) -> None:
            consume(connection, received)
            connection.execute(
                "INSERT INTO turns (id, chat_id, origin, status, started_at) "
                "VALUES (?, ?, ?, 'running', ?)",
                (turn_id, chat_id, origin, time.time()),
            )
            _insert_messages(connection, rows)
            archive_messages(connection, conversation_id, asked)

        await self.db.write(begin)

    async def turn_preview(self, turn_id: str, message_id: int, text: str) -> None:
        await self.db.execute(
            "UPDATE turns SET preview_message_id = ?, preview_text = ? WHERE id = ?",
            (message_id, text, turn_id),
        )

    async def turn_answered(self, turn_id: str, reply: str, *, delivered: bool) -> None:
        await self.db.write(lambda connection: _answer_turn(connection, turn_id, reply, delivered))

    async def finish_turn(
        self,
        turn_id: str,
        reply: str,
        *,
        delivered: bool,
        chat_id: str,
        conversation_id: int,
        messages: list[dict[str, Any]],
        usage: TurnUsage | None,
    ) -> None:
        """A turn's last writes as one transaction: its newest messages, its usage, its reply
        (`turn_answered`). One commit instead of three on every turn."""
        rows = _message_rows(conversation_id, messages)

        def finish(connection: sqlite3.Connection) -> None:
            _insert_messages(connection, rows)
            archive_messages(connection, conversation_id, messages)
            if usage is not None:
                _insert_usage(connection, chat_id, conversation_id, usage)
            _answer_turn(connection, turn_id, reply, delivered)

        await self.db.write(finish)

    async def turn_delivered(self, turn_id: str) -> None:
        await self.db.execute(
            "UPDATE turns SET status = 'done', reply = NULL, preview_text = NULL WHERE id = ?",
            (turn_id,),
        )

    async def turn_failed(self, turn_id: str) -> None:
        """The turn ended in an error the owner was already told about."""
        await self.db.execute(
            "UPDATE turns SET status = 'interrupted', notified = 1, finished_at = ? "
            "WHERE id = ? AND status != 'done'",
            (time.time(), turn_id),
        )

    async def open_turns(self) -> list[dict[str, Any]]:
        """Turns a previous run left unfinished, oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM turns WHERE status IN ('running', 'answered') "
            "OR (status = 'interrupted' AND notified = 0) ORDER BY started_at"
        )
        return [dict(row) for row in rows]

    async def claim_turn_notice(self, turn_id: str, status: str) -> bool:
        """Mark a cut-off turn as told to the owner; False if another start already did."""
        changed = await self.db.execute(
            "UPDATE turns SET status = ?, notified = 1, finished_at = COALESCE(finished_at, ?) "
            "WHERE id = ? AND notified = 0 AND status != 'done'",
            (status, time.time(), turn_id),
        )
        return changed.rowcount == 1

    async def release_turn_notice(self, turn_id: str, status: str) -> None:
        """The notice could not be sent: back as it was, to be tried at the next start."""
        await self.db.execute(
            "UPDATE turns SET status = ?, notified = 0 WHERE id = ?", (status, turn_id)
        )

    # -- limits (docs/reference/limits.md)
    # -------------------------------------------------------------

    async def reserve_limit_use(
        self,
        checks: list[tuple[str, str, float]],
        at: float,
        day: str,
        over: Callable[[int, int, int, float], str | None],
    ) -> tuple[str | None, list[int]]:
        """Count each (profile, glob)'s use this minute and today; if `over` refuses none,
        record one use (with its cost) for each, all in one transaction."""

        def reserve(connection: sqlite3.Connection) -> tuple[str | None, list[int]]:
            for index, (profile, glob, _cost) in enumerate(checks):
                minute, today, spent = _limit_counts(connection, profile, glob, at, day)
                refused = over(index, minute, today, spent)
                if refused is not None:
                    return refused, []
            ids = []
            for profile, glob, cost in checks:
                cursor = connection.execute(
                    "INSERT INTO limit_use (profile, glob, at, day, cost) VALUES (?, ?, ?, ?, ?)",
                    (profile, glob, at, day, cost),
                )
                assert cursor.lastrowid is not None
                ids.append(cursor.lastrowid)
            return None, ids

        return await self.db.write(reserve)

    async def release_limit_use(self, ids: list[int]) -> None:
        marks = ",".join("?" * len(ids))
        await self.db.execute(f"DELETE FROM limit_use WHERE id IN ({marks})", ids)

    async def limit_use(
        self, profile: str, glob: str, at: float, day: str
    ) -> tuple[int, int, float]:
        return await self.db.read(lambda c: _limit_counts(c, profile, glob, at, day))

    # -- per-chat settings -----------------------------------------------------------------

    async def chat_setting(self, chat_id: str, name: str) -> str | None:
        row = await self.db.fetchone(
            "SELECT value FROM settings WHERE key = ?", (f"chat:{chat_id}:{name}",)
        )
        return str(row[0]) if row else None

    async def set_chat_setting(self, chat_id: str, name: str, value: str) -> None:
        await self.db.execute(
            "INSERT INTO settings (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (f"chat:{chat_id}:{name}", value),
        )

    # -- usage ---------------------------------------------------------------------------

    async def record_usage(self, chat_id: str, conversation_id: int, usage: TurnUsage) -> None:
        await self.db.write(
            lambda connection: _insert_usage(connection, chat_id, conversation_id, usage)
        )

    async def last_usage(self, chat_id: str) -> dict[str, Any] | None:
        row = await self.db.fetchone(
            "SELECT model, prompt_tokens, completion_tokens, llm_calls, breakdown FROM usage "
            "WHERE chat_id = ? ORDER BY id DESC LIMIT 1",
            (chat_id,),
        )
        return dict(row) if row else None

    async def usage_totals(self, chat_id: str | None = None, since: float = 0.0) -> dict[str, int]:
        query = (
            "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
            "COUNT(*) FROM usage WHERE created_at >= ?"
        )
        params: tuple[Any, ...] = (since,)
        if chat_id is not None:
            query += " AND chat_id = ?"
            params += (chat_id,)
        row = await self.db.fetchone(query, params)
        assert row is not None
        return {"prompt_tokens": row[0], "completion_tokens": row[1], "turns": row[2]}


def _limit_counts(
    connection: sqlite3.Connection, profile: str, glob: str, at: float, day: str
) -> tuple[int, int, float]:
    row = connection.execute(
        "SELECT COALESCE(SUM(at > :since), 0), COALESCE(SUM(day = :day), 0), "
        "COALESCE(SUM(CASE WHEN day = :day THEN cost END), 0) FROM limit_use "
        "WHERE profile = :profile AND glob = :glob AND (day = :day OR at > :since)",
        {"since": at - 60, "day": day, "profile": profile, "glob": glob},
    ).fetchone()
    return int(row[0]), int(row[1]), float(row[2])


def _open_conversation(connection: sqlite3.Connection, chat_id: str) -> int:
    row = connection.execute(
        "SELECT id FROM conversations WHERE chat_id = ? AND closed_at IS NULL "
        "ORDER BY id DESC LIMIT 1",
        (chat_id,),
    ).fetchone()
    if row:
        return int(row[0])
    cursor = connection.execute(
        "INSERT INTO conversations (chat_id, started_at) VALUES (?, ?)", (chat_id, time.time())
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def _message_rows(conversation_id: int, messages: list[dict[str, Any]]) -> list[MessageRow]:
    now = time.time()
    rows: list[MessageRow] = []
    for message in messages:
        content = message.get("content")
        structured = content is not None and not isinstance(content, str)
        rows.append(
            (
                conversation_id,
                message["role"],
                json.dumps(content) if structured else content,
                "json" if structured else None,
                json.dumps(message["tool_calls"]) if message.get("tool_calls") else None,
                message.get("tool_call_id"),
                now,
            )
        )
    return rows


def _insert_messages(connection: sqlite3.Connection, rows: list[MessageRow]) -> None:
    connection.executemany(
        "INSERT INTO messages (conversation_id, role, content, content_format, tool_calls, "
        "tool_call_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def _answer_turn(connection: sqlite3.Connection, turn_id: str, reply: str, delivered: bool) -> None:
    connection.execute(
        "UPDATE turns SET status = ?, reply = ?, finished_at = ? WHERE id = ?",
        ("done" if delivered else "answered", reply, time.time(), turn_id),
    )


def _insert_usage(
    connection: sqlite3.Connection, chat_id: str, conversation_id: int, usage: TurnUsage
) -> None:
    connection.execute(
        "INSERT INTO usage (chat_id, conversation_id, model, prompt_tokens, "
        "completion_tokens, llm_calls, breakdown, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chat_id,
            conversation_id,
            usage.model,
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.llm_calls,
            json.dumps(usage.breakdown),
            time.time(),
        ),
    )
