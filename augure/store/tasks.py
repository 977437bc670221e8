"""Background tasks (docs/reference/execution.md#background-work): the released calls, what they
produced, and who was told.

Each method is one transaction. `list` and `get` return plain `TaskRow`s: the dashboard and
the CLI read them too, without the task manager.
"""

from __future__ import annotations

import builtins
import json
import secrets
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Literal

from augure.store.connection import Database

TaskState = Literal["running", "done", "failed", "cancelled", "interrupted"]
STATUSES: tuple[TaskState, ...] = ("running", "done", "failed", "cancelled", "interrupted")
# Short ids the owner can type back (`task_cancel`, the CLI): no 0/o, 1/l look-alikes.
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
ID_LENGTH = 6


@dataclass(frozen=True)
class TaskRow:
    id: str
    chat_id: str
    tool: str
    arguments: dict[str, Any]  # redacted, as the owner would be shown them
    status: TaskState
    progress: str | None
    result: str | None  # as the model reads it, without the untrusted marker: see `source`
    invocation: str | None
    notified: bool
    created_at: float
    finished_at: float | None
    # Provenance of `result`: where its outside content came from (None: trusted). Whatever
    # shows the result to the model marks it from this (`background.tools`).
    source: str | None = None
    # The origin chain of the released call (`chat>background`) and the tools the turn that
    # released it could use (None: all): its report turn runs with the same.
    origin: str | None = None
    tools: frozenset[str] | None = None

    def elapsed(self, now: float | None = None) -> float:
        end = self.finished_at if self.finished_at is not None else (now or time.time())
        return max(0.0, end - self.created_at)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "chat_id": self.chat_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "progress": self.progress,
            "result": self.result,
            "invocation": self.invocation,
            "source": self.source,
            "origin": self.origin,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
        }


def new_task_id() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(ID_LENGTH))


class Tasks:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(
        self,
        chat_id: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        origin: str | None = None,
        tools: frozenset[str] | None = None,
    ) -> str:
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        allowed = json.dumps(sorted(tools)) if tools is not None else None

        def insert(connection: sqlite3.Connection) -> str:
            while True:  # ~900 million ids: a collision is rare, and then simply retried
                task_id = new_task_id()
                cursor = connection.execute(
                    "INSERT OR IGNORE INTO tasks (id, chat_id, tool, arguments, status, "
                    "created_at, origin, tools) VALUES (?, ?, ?, ?, 'running', ?, ?, ?)",
                    (task_id, chat_id, tool, shown, time.time(), origin, allowed),
                )
                if cursor.rowcount == 1:
                    return task_id

        return await self.db.write(insert)

    async def attach(self, task_id: str, invocation: str) -> None:
        """The audit record of the task's call, once the call is about to run."""
        await self.db.execute("UPDATE tasks SET invocation = ? WHERE id = ?", (invocation, task_id))

    async def progress(self, task_id: str, line: str) -> None:
        await self.db.execute(
            "UPDATE tasks SET progress = ? WHERE id = ? AND status = 'running'", (line, task_id)
        )

    async def finish(
        self,
        task_id: str,
        status: TaskState,
        result: str,
        progress: str | None = None,
        source: str | None = None,
    ) -> bool:
        """Record the outcome and its provenance; False if the task had already ended
        (cancelled, interrupted)."""
        changed = await self.db.execute(
            "UPDATE tasks SET status = ?, result = ?, source = ?, "
            "progress = COALESCE(?, progress), finished_at = ? "
            "WHERE id = ? AND status = 'running'",
            (status, result, source, progress, time.time(), task_id),
        )
        return changed.rowcount == 1

    async def list(
        self,
        limit: int = 20,
        offset: int = 0,
        status: TaskState | None = None,
        chat_id: str | None = None,
    ) -> builtins.list[TaskRow]:
        """Newest first; running ones first among them when no status is asked for. With
        `chat_id`, only that chat's tasks."""
        asked = {"status": status, "chat_id": chat_id}
        chosen = {column: value for column, value in asked.items() if value is not None}
        where = " AND ".join(f"{column} = ?" for column in chosen)
        rows = await self.db.fetchall(
            f"SELECT * FROM tasks {'WHERE ' + where if where else ''} "
            "ORDER BY status != 'running', created_at DESC LIMIT ? OFFSET ?",
            (*chosen.values(), limit, offset),
        )
        return [_row(row) for row in rows]

    async def get(self, task_id: str) -> TaskRow | None:
        row = await self.db.fetchone("SELECT * FROM tasks WHERE id = ?", (task_id,))
        return _row(row) if row else None

    async def interrupt_running(self) -> builtins.list[TaskRow]:
        """At start: tasks a previous run left `running` were cut off. They become
        `interrupted`; returned are those whose owner has not been told yet."""

        def interrupt(connection: sqlite3.Connection) -> builtins.list[TaskRow]:
            connection.execute(
                "UPDATE tasks SET status = 'interrupted', finished_at = ? WHERE status = 'running'",
                (time.time(),),
            )
            rows = connection.execute(
                "SELECT * FROM tasks WHERE status = 'interrupted' AND notified = 0 "
                "ORDER BY created_at"
            ).fetchall()
            return [_row(row) for row in rows]

        return await self.db.write(interrupt)

    async def unreported(self) -> builtins.list[TaskRow]:
        """Tasks that ended but whose result never reached their chat (the report back
        failed, or a restart cut it off), oldest first."""
        rows = await self.db.fetchall(
            "SELECT * FROM tasks WHERE status IN ('done', 'failed') AND notified = 0 "
            "ORDER BY created_at"
        )
        return [_row(row) for row in rows]

    async def claim_notice(self, task_id: str) -> bool:
        """Mark the owner as told about this task; False if someone already claimed it."""
        changed = await self.db.execute(
            "UPDATE tasks SET notified = 1 WHERE id = ? AND notified = 0", (task_id,)
        )
        return changed.rowcount == 1

    async def release_notice(self, task_id: str) -> None:
        """The notice could not be sent: to be tried again (at the next start)."""
        await self.db.execute("UPDATE tasks SET notified = 0 WHERE id = ?", (task_id,))


def _row(row: sqlite3.Row) -> TaskRow:
    return TaskRow(
        id=row["id"],
        chat_id=row["chat_id"],
        tool=row["tool"],
        arguments=json.loads(row["arguments"]),
        status=row["status"],
        progress=row["progress"],
        result=row["result"],
        invocation=row["invocation"],
        notified=bool(row["notified"]),
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        source=row["source"],
        origin=row["origin"],
        tools=frozenset(json.loads(row["tools"])) if row["tools"] is not None else None,
    )
