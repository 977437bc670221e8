"""Invocation records and approval rules: what every tool call did, and who allowed it."""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from augure.store.state import Store

STATUSES = (
    "pending",
    "approved",
    "rejected",
    "refused",  # a limit stopped it before it ran (docs/reference/limits.md#over-a-limit)
    "running",
    "completed",
    "failed",
    "interrupted",
)
# The approval status of a call `Allow in this chat` approved: the press, and each later
# call with the same target that the grant covered (docs/reference/approvals.md).
SESSION = "session"
OUTPUT_CAP = 4000  # characters of output kept in the record; the model got its own copy


@dataclass(frozen=True)
class Rule:
    id: int
    effect: str
    pattern: str
    created_by: str
    created_at: float


def new_id() -> str:
    return secrets.token_hex(4)


class Audit:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.db = store.db

    async def create(
        self,
        *,
        tool: str,
        origin: str,
        arguments: dict[str, Any],
        chat_id: str | None,
        turn_id: str | None,
        target: str | None,
        approval_status: str,
        decided_by: str | None = None,
        digest: str | None = None,
        parent: str | None = None,
    ) -> str:
        invocation_id = new_id()
        await self.db.execute(
            "INSERT INTO invocations (id, chat_id, turn_id, tool, origin, input, target, status, "
            "approval_status, decided_by, created_at, approval_digest, parent) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                invocation_id,
                chat_id,
                turn_id,
                tool,
                origin,
                json.dumps(arguments, ensure_ascii=False),
                target,
                {"pending": "pending", "rejected": "rejected"}.get(approval_status, "approved"),
                approval_status,
                decided_by,
                time.time(),
                digest,
                parent,
            ),
        )
        return invocation_id

    async def refused(
        self,
        *,
        tool: str,
        origin: str,
        arguments: dict[str, Any],
        chat_id: str | None,
        turn_id: str | None,
        reason: str,
        parent: str | None = None,
    ) -> str:
        """The record of a call a limit stopped: it never ran and nobody was asked."""
        invocation_id = new_id()
        now = time.time()
        await self.db.execute(
            "INSERT INTO invocations (id, chat_id, turn_id, tool, origin, input, status, "
            "approval_status, reason, error, created_at, completed_at, parent) "
            "VALUES (?, ?, ?, ?, ?, ?, 'refused', 'not_required', ?, ?, ?, ?, ?)",
            (
                invocation_id,
                chat_id,
                turn_id,
                tool,
                origin,
                json.dumps(arguments, ensure_ascii=False),
                reason,
                reason,
                now,
                now,
                parent,
            ),
        )
        return invocation_id

    async def decide(
        self, invocation_id: str, approval_status: str, decided_by: str, reason: str | None = None
    ) -> bool:
        """Record a decision on a pending request. False if it was already decided.
        `session` (`Allow in this chat`) approves, as `approved` does."""
        status = "approved" if approval_status in ("approved", SESSION) else "rejected"
        changed = await self.db.execute(
            "UPDATE invocations SET approval_status = ?, status = ?, decided_by = ?, reason = ? "
            "WHERE id = ? AND approval_status = 'pending'",
            (approval_status, status, decided_by, reason, invocation_id),
        )
        return changed.rowcount == 1

    async def set_approval_ref(self, invocation_id: str, ref: dict[str, Any] | None) -> None:
        await self.db.execute(
            "UPDATE invocations SET approval_ref = ? WHERE id = ?",
            (json.dumps(ref) if ref else None, invocation_id),
        )

    async def started(self, invocation_id: str) -> None:
        await self.db.execute(
            "UPDATE invocations SET status = 'running', started_at = ? WHERE id = ?",
            (time.time(), invocation_id),
        )

    async def finished(
        self, invocation_id: str, *, success: bool, output: str, cost_estimate: int
    ) -> None:
        await self.db.execute(
            "UPDATE invocations SET status = ?, output = ?, error = ?, cost_estimate = ?, "
            "completed_at = ? WHERE id = ?",
            (
                "completed" if success else "failed",
                output[:OUTPUT_CAP],
                None if success else output[:500],
                cost_estimate,
                time.time(),
                invocation_id,
            ),
        )

    async def interrupt_running(self) -> list[dict[str, Any]]:
        """At start: calls a previous run left `running` were cut off. They become
        `interrupted`, are returned once (to tell the owner), and are never re-run."""

        def interrupt(connection: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = connection.execute(
                "SELECT id, tool, chat_id FROM invocations "
                "WHERE status = 'running' OR (status = 'interrupted' AND notified = 0)"
            ).fetchall()
            connection.execute(
                "UPDATE invocations SET status = 'interrupted', notified = 1, "
                "error = COALESCE(error, 'interrupted by a restart'), "
                "completed_at = COALESCE(completed_at, ?) "
                "WHERE status = 'running' OR (status = 'interrupted' AND notified = 0)",
                (time.time(),),
            )
            return [dict(row) for row in rows]

        return await self.db.write(interrupt)

    async def get(self, invocation_id: str) -> dict[str, Any] | None:
        row = await self.db.fetchone("SELECT * FROM invocations WHERE id = ?", (invocation_id,))
        return dict(row) if row else None

    async def decisions(self, invocation_ids: list[str]) -> list[dict[str, Any]]:
        """Those of the given requests that were decided (by anyone, e.g. the CLI)."""
        if not invocation_ids:
            return []
        marks = ",".join("?" * len(invocation_ids))
        rows = await self.db.fetchall(
            f"SELECT id, approval_status, decided_by, reason FROM invocations "
            f"WHERE id IN ({marks}) AND approval_status != 'pending'",
            invocation_ids,
        )
        return [dict(row) for row in rows]

    async def listing(
        self,
        *,
        status: str | None = None,
        tool: str | None = None,
        approval_status: str | None = None,
        limit: int = 50,
    ) -> list[dict[str, Any]]:
        query, params = "SELECT * FROM invocations WHERE 1 = 1", []
        for column, value in (
            ("status", status),
            ("tool", tool),
            ("approval_status", approval_status),
        ):
            if value is not None:
                query += f" AND {column} = ?"
                params.append(value)
        query += " ORDER BY created_at DESC, rowid DESC LIMIT ?"
        return [dict(row) for row in await self.db.fetchall(query, [*params, limit])]

    # -- rules -----------------------------------------------------------------------

    async def add_rule(self, effect: str, pattern: str, created_by: str) -> Rule:
        def add(connection: sqlite3.Connection) -> Rule:
            connection.execute(
                "INSERT OR IGNORE INTO rules (effect, pattern, created_by, created_at) "
                "VALUES (?, ?, ?, ?)",
                (effect, pattern, created_by, time.time()),
            )
            row = connection.execute(
                "SELECT * FROM rules WHERE effect = ? AND pattern = ?", (effect, pattern)
            ).fetchone()
            return Rule(**dict(row))

        return await self.db.write(add)

    async def rules(self) -> list[Rule]:
        return [
            Rule(**dict(row)) for row in await self.db.fetchall("SELECT * FROM rules ORDER BY id")
        ]

    async def revoke_rule(self, rule_id: int) -> bool:
        changed = await self.db.execute("DELETE FROM rules WHERE id = ?", (rule_id,))
        return changed.rowcount == 1
