"""Messages taken in and not yet answered (docs/reference/durability.md, "Messages waiting to
be folded").

Telegram counts a message delivered as soon as the bot has read it, while the channel may hold
it for the fold window or behind a running turn. Each message is stored here on arrival; the
turn that answers it deletes it in the transaction that stores it in the history
(`Store.begin_turn`), so a message is always in exactly one of the two, and a start hands
back what a crash left waiting.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

from augure.common.content import Content
from augure.common.errors import NotDone
from augure.store.connection import Database

# A delivery from the channel: the update's id and a digest of its content, so that a resend
# (same id, same content) is told from a new update that reuses an id.
UpdateKey = tuple[int, str]
# Telegram keeps an unconfirmed update for 24 hours; a taken id is kept twice that long.
# (After a week without updates Telegram picks the next id at random: kept ids are long gone.)
KEEP_TAKEN_SECONDS = 2 * 24 * 3600


class AlreadyAnswered(NotDone):
    """A batch named a waiting message that another turn has already taken: answering it
    again would answer it twice, so the turn is not begun."""


@dataclass(frozen=True)
class Waiting:
    id: int  # the arrival order
    chat_id: str
    content: Content
    album: str | None
    spoken: bool  # a voice note, which may be answered by voice (docs/voice.md)


class Inbox:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def receive(
        self,
        chat_id: str,
        content: Content,
        album: str | None = None,
        *,
        spoken: bool = False,
        delivery: UpdateKey | None = None,
    ) -> int:
        """`delivery` (the update's id and digest): recorded as taken in the same transaction,
        so a message is either stored and known taken, or neither and Telegram sends it
        again."""
        structured = not isinstance(content, str)

        def insert(connection: sqlite3.Connection) -> int:
            if delivery is not None:
                _note_taken(connection, delivery)
            cursor = connection.execute(
                "INSERT INTO inbox (chat_id, content, content_format, album, spoken, "
                "received_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    chat_id,
                    json.dumps(content) if structured else content,
                    "json" if structured else None,
                    album,
                    int(spoken),
                    time.time(),
                ),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid

        return await self.db.write(insert)

    async def taken_updates(self) -> set[UpdateKey]:
        """The updates taken in the last KEEP_TAKEN_SECONDS; older ones are forgotten."""

        def prune_and_read(connection: sqlite3.Connection) -> set[UpdateKey]:
            cutoff = time.time() - KEEP_TAKEN_SECONDS
            connection.execute("DELETE FROM taken_updates WHERE taken_at < ?", (cutoff,))
            rows = connection.execute("SELECT update_id, digest FROM taken_updates")
            return {(row[0], row[1]) for row in rows}

        return await self.db.write(prune_and_read)

    async def record_update(self, delivery: UpdateKey) -> None:
        await self.db.write(lambda connection: _note_taken(connection, delivery))

    async def park(self, held: list[tuple[UpdateKey, str]]) -> None:
        """Updates still being handled, each with its whole body as JSON: kept until taken,
        so Telegram may be told to forget them."""

        def insert(connection: sqlite3.Connection) -> None:
            now = time.time()
            connection.executemany(
                "INSERT OR IGNORE INTO parked_updates (update_id, digest, body, parked_at) "
                "VALUES (?, ?, ?, ?)",
                [(*delivery, body, now) for delivery, body in held],
            )

        await self.db.write(insert)

    async def parked(self) -> list[str]:
        """The bodies of parked updates a previous run did not finish, oldest first."""
        rows = await self.db.fetchall("SELECT body FROM parked_updates ORDER BY update_id")
        return [row["body"] for row in rows]

    async def waiting(self) -> list[Waiting]:
        """Every message still waiting, in arrival order."""
        rows = await self.db.fetchall(
            "SELECT id, chat_id, content, content_format, album, spoken FROM inbox ORDER BY id"
        )
        return [
            Waiting(
                id=row["id"],
                chat_id=row["chat_id"],
                content=json.loads(row["content"])
                if row["content_format"] == "json"
                else row["content"],
                album=row["album"],
                spoken=bool(row["spoken"]),
            )
            for row in rows
        ]

    async def dismiss(self, ids: Sequence[int]) -> None:
        """Messages the owner was told could not be handled: answered by that error."""
        if ids:
            await self.db.write(lambda connection: consume(connection, ids, strict=False))


def consume(connection: sqlite3.Connection, ids: Sequence[int], *, strict: bool = True) -> None:
    """Inside the caller's transaction: the batch's messages leave the inbox. `strict`: each
    must still be waiting, or the whole transaction is rolled back."""
    if not ids:
        return
    marks = ",".join("?" * len(ids))
    deleted = connection.execute(f"DELETE FROM inbox WHERE id IN ({marks})", list(ids)).rowcount
    if strict and deleted != len(set(ids)):
        raise AlreadyAnswered(f"{len(set(ids)) - deleted} of {len(ids)} waiting messages")


def _note_taken(connection: sqlite3.Connection, delivery: UpdateKey) -> None:
    now = time.time()
    connection.execute(
        "INSERT OR IGNORE INTO taken_updates (update_id, digest, taken_at) VALUES (?, ?, ?)",
        (*delivery, now),
    )
    # Taken: a parked copy is done with, in the same transaction.
    connection.execute("DELETE FROM parked_updates WHERE update_id = ? AND digest = ?", delivery)
    # The index makes this a short range scan: usually nothing, a few rows once in a while.
    connection.execute("DELETE FROM taken_updates WHERE taken_at < ?", (now - KEEP_TAKEN_SECONDS,))
