"""SQLite state: conversations, messages, usage. One file, WAL, versioned migrations."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

# Each entry moves the schema one version forward; never edit a released entry, append one.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        chat_id TEXT NOT NULL,
        started_at REAL NOT NULL,
        closed_at REAL
    );
    CREATE INDEX conversations_open ON conversations(chat_id) WHERE closed_at IS NULL;
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id),
        role TEXT NOT NULL,
        content TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        created_at REAL NOT NULL
    );
    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
    CREATE TABLE usage (
        id INTEGER PRIMARY KEY,
        chat_id TEXT NOT NULL,
        conversation_id INTEGER,
        model TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        llm_calls INTEGER NOT NULL,
        breakdown TEXT,
        created_at REAL NOT NULL
    );
    """,
    """
    CREATE TABLE invocations (
        id TEXT PRIMARY KEY,
        chat_id TEXT,
        turn_id TEXT,
        tool TEXT NOT NULL,
        origin TEXT NOT NULL,
        input TEXT NOT NULL,
        target TEXT,
        output TEXT,
        status TEXT NOT NULL,
        approval_status TEXT NOT NULL,
        decided_by TEXT,
        reason TEXT,
        error TEXT,
        cost_estimate INTEGER,
        approval_ref TEXT,
        created_at REAL NOT NULL,
        started_at REAL,
        completed_at REAL
    );
    CREATE INDEX invocations_by_time ON invocations(created_at);
    CREATE INDEX invocations_pending ON invocations(approval_status)
        WHERE approval_status = 'pending';
    CREATE TABLE rules (
        id INTEGER PRIMARY KEY,
        effect TEXT NOT NULL CHECK (effect IN ('allow', 'deny')),
        pattern TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at REAL NOT NULL,
        UNIQUE (effect, pattern)
    );
    """,
    """
    CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        cron TEXT,
        run_at TEXT,
        timezone TEXT NOT NULL,
        prompt TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        next_run TEXT,
        last_run TEXT,
        last_outcome TEXT,
        run_requested INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    );
    CREATE TABLE job_runs (
        id INTEGER PRIMARY KEY,
        job_id TEXT NOT NULL,
        scheduled_for TEXT NOT NULL,
        status TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        reply TEXT,
        started_at REAL NOT NULL,
        finished_at REAL,
        UNIQUE (job_id, scheduled_for)
    );
    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # Skills: state, failures and run history live here, never in the skill's files. A job
    # with `skill` set runs that skill instead of a prompt.
    """
    ALTER TABLE jobs ADD COLUMN skill TEXT;
    CREATE TABLE skills (
        id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        version TEXT NOT NULL,
        source TEXT NOT NULL,
        failures INTEGER NOT NULL DEFAULT 0,
        reason TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE skill_runs (
        id INTEGER PRIMARY KEY,
        skill_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        started_at REAL NOT NULL,
        finished_at REAL,
        outcome TEXT,
        output TEXT,
        calls TEXT
    );
    CREATE INDEX skill_runs_by_skill ON skill_runs(skill_id, id);
    """,
    # The sha256 of what an approval request showed: the press approved exactly that.
    """
    ALTER TABLE invocations ADD COLUMN approval_digest TEXT;
    """,
]


@dataclass(frozen=True)
class TurnUsage:
    model: str
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    breakdown: dict[str, int]


class Store:
    """The one connection to state.db. Methods are small and commit what they write."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db

    @classmethod
    async def open(cls, path: Path) -> Store:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path)
        db.row_factory = aiosqlite.Row
        await db.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable across process crashes in WAL mode; only power loss can drop the
        # last commits, which is the trade SQLite documents for WAL.
        await db.execute("PRAGMA synchronous=NORMAL")
        await db.execute("PRAGMA foreign_keys=ON")
        await db.execute("PRAGMA busy_timeout=5000")
        store = cls(db)
        await store.migrate()
        return store

    async def close(self) -> None:
        await self.db.close()

    async def migrate(self) -> None:
        async with self.db.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        version = int(row[0]) if row else 0
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            await self.db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version={number};\nCOMMIT;")

    async def schema_version(self) -> int:
        async with self.db.execute("PRAGMA user_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    # -- conversations -------------------------------------------------------------------

    async def open_conversation(self, chat_id: str) -> int:
        async with self.db.execute(
            "SELECT id FROM conversations WHERE chat_id = ? AND closed_at IS NULL "
            "ORDER BY id DESC LIMIT 1",
            (chat_id,),
        ) as cursor:
            row = await cursor.fetchone()
        if row:
            return int(row[0])
        cursor = await self.db.execute(
            "INSERT INTO conversations (chat_id, started_at) VALUES (?, ?)",
            (chat_id, time.time()),
        )
        await self.db.commit()
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    async def close_conversation(self, chat_id: str) -> None:
        await self.db.execute(
            "UPDATE conversations SET closed_at = ? WHERE chat_id = ? AND closed_at IS NULL",
            (time.time(), chat_id),
        )
        await self.db.commit()

    async def add_messages(self, conversation_id: int, messages: list[dict[str, Any]]) -> None:
        now = time.time()
        await self.db.executemany(
            "INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    conversation_id,
                    message["role"],
                    _encode_content(message.get("content")),
                    json.dumps(message["tool_calls"]) if message.get("tool_calls") else None,
                    message.get("tool_call_id"),
                    now,
                )
                for message in messages
            ],
        )
        await self.db.commit()

    async def replace_messages(self, conversation_id: int, messages: list[dict[str, Any]]) -> None:
        """Rewrite a conversation (after pruning); one transaction, so nothing is half-done."""
        await self.db.execute("DELETE FROM messages WHERE conversation_id = ?", (conversation_id,))
        await self.add_messages(conversation_id, messages)

    async def messages(self, conversation_id: int) -> list[dict[str, Any]]:
        async with self.db.execute(
            "SELECT role, content, tool_calls, tool_call_id FROM messages "
            "WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        ) as cursor:
            rows = await cursor.fetchall()
        result: list[dict[str, Any]] = []
        for row in rows:
            message: dict[str, Any] = {"role": row["role"], "content": _decode(row["content"])}
            if row["tool_calls"]:
                message["tool_calls"] = json.loads(row["tool_calls"])
            if row["tool_call_id"]:
                message["tool_call_id"] = row["tool_call_id"]
            result.append(message)
        return result

    # -- usage ---------------------------------------------------------------------------

    async def record_usage(self, chat_id: str, conversation_id: int, usage: TurnUsage) -> None:
        await self.db.execute(
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
        await self.db.commit()

    async def usage_totals(self, chat_id: str | None = None, since: float = 0.0) -> dict[str, int]:
        query = (
            "SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
            "COUNT(*) FROM usage WHERE created_at >= ?"
        )
        params: tuple[Any, ...] = (since,)
        if chat_id is not None:
            query += " AND chat_id = ?"
            params += (chat_id,)
        async with self.db.execute(query, params) as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return {"prompt_tokens": row[0], "completion_tokens": row[1], "turns": row[2]}


def _encode_content(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    # Multi-part content (text + images) is stored as JSON with a marker prefix.
    return "\x00json:" + json.dumps(content)


def _decode(content: str | None) -> Any:
    if content is not None and content.startswith("\x00json:"):
        return json.loads(content[len("\x00json:") :])
    return content
