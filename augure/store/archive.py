"""The archive: every message said in a chat, kept after compaction and searchable
(docs/recall.md).

The live history (`messages`) is rewritten when it is compacted or pruned; the archive is
only ever appended to, in the same transaction that stores a new message, and its full-text
index (FTS5, `archive_index`) is kept in step by triggers. A message of outside content keeps
its provenance in `source`, so an excerpt of it can be marked again wherever it is shown.
"""

from __future__ import annotations

import heapq
import json
import re
import sqlite3
import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from augure.store.connection import Database
from augure.store.vectors import dot, unpack

# How a tool message of outside content begins and ends (tools/result.py writes it; this
# layer sits below the tools and reads the shape only, see docs/security.md).
_MARKED = re.compile(r'\A<untrusted_content source="([^"]*)">\n(.*)\n</untrusted_content>\Z', re.S)
_SUMMARY = "[Summary of the earlier conversation:]"
_WORD = re.compile(r"\w+", re.UNICODE)
# Words of a query that reach the index: enough for a question, bounded for the planner.
MAX_QUERY_WORDS = 24
EXCERPT_TOKENS = 24
# A query word found in more than this share of the archive (and more than the floor's
# messages) ranks nothing: it is left out of the search.
COMMON_SHARE = 0.02
COMMON_FLOOR = 200
# Vectors one search compares at most (plain Python: ~32 ns a dimension on this class of
# machine, so 20,000 of 256 dimensions take ~0.2 s; docs/performance.md#recall).
MAX_VECTOR_SCAN = 20_000
ARCHIVED_ROLES = ("user", "assistant", "tool")
# The first line of what `recall` returns. Its results are copies of archived text: archived
# again, a forgotten message would live on in them. Its calls are left out likewise.
RECALLED = "Recalled from past conversations and memory:"
RECALL_TOOL = "recall"


@dataclass(frozen=True)
class ArchivedMessage:
    id: int
    chat_id: str
    role: str
    created_at: float
    excerpt: str
    source: str | None
    score: float = 0.0  # BM25 of a search (lower is better)


@dataclass(frozen=True)
class Pending:
    id: int
    text: str


def searchable(message: dict[str, Any]) -> tuple[str, str | None] | None:
    """(text to index, its outside source) of a message, or None for one not archived (a
    system message, a summary: derived from messages archived already)."""
    if message.get("role") not in ARCHIVED_ROLES:
        return None
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if content is None:
        text = ""
    if text.startswith(_SUMMARY):
        return None
    source = None
    marked = _MARKED.match(text)
    if marked is not None:
        source, text = marked.group(1), marked.group(2)
    if text.startswith(RECALLED):
        return None
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        if function.get("name") != RECALL_TOOL:
            text += f" [called {function.get('name')}({function.get('arguments')})]"
    text = text.strip()
    return (text, source) if text else None


def archive_messages(
    connection: sqlite3.Connection, conversation_id: int, messages: Iterable[dict[str, Any]]
) -> None:
    """Append new messages to the archive, inside the caller's transaction."""
    rows = _roles_and_rows(messages)
    if not rows:
        return
    chat = connection.execute(
        "SELECT chat_id FROM conversations WHERE id = ?", (conversation_id,)
    ).fetchone()
    if chat is None:
        return
    now = time.time()
    connection.executemany(
        "INSERT INTO archive (chat_id, conversation_id, role, text, source, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(chat[0], conversation_id, role, text, source, now) for role, (text, source) in rows],
    )


def _roles_and_rows(messages: Iterable[dict[str, Any]]) -> list[tuple[str, tuple[str, str | None]]]:
    found = []
    for message in messages:
        entry = searchable(message)
        if entry is not None:
            found.append((str(message["role"]), entry))
    return found


def query_words(text: str) -> list[str]:
    return list(dict.fromkeys(word.lower() for word in _WORD.findall(text)))[:MAX_QUERY_WORDS]


def fts_query(text: str) -> str | None:
    """The words of `text` as an FTS5 query any of whose words may match (BM25 ranks those
    matching more, and rarer, words first); None when it has no word."""
    words = query_words(text)
    return " OR ".join(f'"{word}"' for word in words) if words else None


def telling(connection: sqlite3.Connection, words: list[str]) -> list[str]:
    """The words of a query that tell messages apart. A word in more than `COMMON_SHARE` of
    the archive ("the", "what", "is", in any language) matches most of it: BM25 would score
    tens of thousands of rows only to rank them last. Without a rarer word, the two rarest
    are kept."""
    marks = ",".join("?" * len(words))
    counts = dict(
        connection.execute(f"SELECT term, doc FROM archive_terms WHERE term IN ({marks})", words)
    )
    size = connection.execute("SELECT COALESCE(MAX(id), 0) FROM archive").fetchone()[0]
    common = max(COMMON_FLOOR, size * COMMON_SHARE)
    kept = [word for word in words if counts.get(word, 0) <= common]
    return kept or sorted(words, key=lambda word: counts.get(word, 0))[:2]


@dataclass(frozen=True)
class Window:
    """Which part of the archive a search looks at: one chat (None: all) and a time span."""

    chat_id: str | None = None
    since: float | None = None
    until: float | None = None

    def where(self, table: str) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if self.chat_id is not None:
            clauses.append(f"{table}.chat_id = ?")
            params.append(self.chat_id)
        if self.since is not None:
            clauses.append(f"{table}.created_at >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"{table}.created_at < ?")
            params.append(self.until)
        return "".join(f" AND {clause}" for clause in clauses), params


class Archive:
    """Searching and embedding the archive; each call is one database operation. Forgetting
    is augure.store.words: it reaches beyond the archive."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def search(self, query: str, window: Window, limit: int) -> list[ArchivedMessage]:
        """The best `limit` matches, best first (BM25)."""
        words = query_words(query)
        if not words:
            return []
        extra, params = window.where("a")

        def find(connection: sqlite3.Connection) -> list[sqlite3.Row]:
            match = fts_query(" ".join(telling(connection, words)))
            return connection.execute(
                "SELECT a.id, a.chat_id, a.role, a.created_at, a.source, "
                f"snippet(archive_index, 0, '', '', '…', {EXCERPT_TOKENS}) AS excerpt, "
                "bm25(archive_index) AS score "
                "FROM archive_index JOIN archive a ON a.id = archive_index.rowid "
                f"WHERE archive_index MATCH ?{extra} ORDER BY bm25(archive_index) LIMIT ?",
                [match, *params, limit],
            ).fetchall()

        rows = await self.db.read(find)
        return [_entry(row, row["excerpt"], row["score"]) for row in rows]

    async def turn_started(self, turn_id: str | None) -> float | None:
        """When a turn began: a search from inside it looks only at what came before."""
        if turn_id is None:
            return None
        row = await self.db.fetchone("SELECT started_at FROM turns WHERE id = ?", (turn_id,))
        return float(row[0]) if row else None

    async def entries(self, ids: Sequence[int]) -> list[ArchivedMessage]:
        """The entries with these ids (an excerpt: the text's beginning), in that order."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = await self.db.fetchall(
            "SELECT id, chat_id, role, created_at, source, substr(text, 1, 240) AS excerpt "
            f"FROM archive WHERE id IN ({marks})",
            list(ids),
        )
        by_id = {row["id"]: _entry(row, row["excerpt"]) for row in rows}
        return [by_id[i] for i in ids if i in by_id]

    # -- vectors (docs/recall.md#vectors) ---------------------------------------------------

    async def unembedded(self, model: str, limit: int) -> list[Pending]:
        """The oldest entries without a vector from `model`, after the last one embedded."""
        rows = await self.db.fetchall(
            "SELECT id, text FROM archive WHERE id > "
            "(SELECT COALESCE(MAX(archive_id), 0) FROM archive_vectors WHERE model = ?) "
            "ORDER BY id LIMIT ?",
            (model, limit),
        )
        return [Pending(row["id"], row["text"]) for row in rows]

    async def store_vectors(self, model: str, vectors: Sequence[tuple[int, array[float]]]) -> None:
        await self.db.write(
            lambda connection: connection.executemany(
                "INSERT OR REPLACE INTO archive_vectors (archive_id, model, vector) "
                "VALUES (?, ?, ?)",
                [(entry_id, model, vector.tobytes()) for entry_id, vector in vectors],
            )
        )

    async def nearest(
        self, model: str, query: array[float], window: Window, limit: int
    ) -> list[tuple[int, float]]:
        """(entry id, cosine) of the `limit` closest vectors; stored vectors are unit length.
        Brute force on the database thread over the window's newest `MAX_VECTOR_SCAN`
        vectors: older messages are still found by their words (docs/performance.md)."""
        extra, params = window.where("a")

        def scan(connection: sqlite3.Connection) -> list[tuple[int, float]]:
            rows = connection.execute(
                "SELECT v.archive_id, v.vector FROM archive_vectors v "
                f"JOIN archive a ON a.id = v.archive_id WHERE v.model = ?{extra} "
                "ORDER BY v.archive_id DESC LIMIT ?",
                [model, *params, MAX_VECTOR_SCAN],
            )
            return closest(query, rows, limit)

        return await self.db.read(scan)

    async def memory_vectors(self, model: str, digests: Sequence[str]) -> dict[str, array[float]]:
        if not digests:
            return {}
        marks = ",".join("?" * len(digests))
        rows = await self.db.fetchall(
            f"SELECT digest, vector FROM memory_vectors WHERE model = ? AND digest IN ({marks})",
            [model, *digests],
        )
        return {row["digest"]: unpack(row["vector"]) for row in rows}

    async def store_memory_vectors(
        self, model: str, vectors: Sequence[tuple[str, array[float]]]
    ) -> None:
        await self.db.write(
            lambda connection: connection.executemany(
                "INSERT OR REPLACE INTO memory_vectors (digest, model, vector) VALUES (?, ?, ?)",
                [(digest, model, vector.tobytes()) for digest, vector in vectors],
            )
        )


def closest(
    query: array[float], rows: Iterable[tuple[Any, bytes]], limit: int
) -> list[tuple[Any, float]]:
    """The `limit` rows whose vector has the largest dot product with `query`."""
    scored = ((key, dot(query, unpack(blob))) for key, blob in rows)
    return heapq.nlargest(limit, scored, key=lambda pair: pair[1])


def _entry(row: sqlite3.Row, excerpt: str, score: float = 0.0) -> ArchivedMessage:
    return ArchivedMessage(
        row["id"], row["chat_id"], row["role"], row["created_at"], excerpt, row["source"], score
    )
