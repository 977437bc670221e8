"""What `recall` and `augure recall` find: archived messages and memory paragraphs, ranked
by BM25, fused with vector similarity when vectors are configured (docs/recall.md)."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from augure.llm.spend import BudgetReached
from augure.memory.store import MemoryStore
from augure.store.archive import EXCERPT_TOKENS, Archive, ArchivedMessage, Window, fts_query
from augure.store.vectors import dot
from augure.tools.recall_vectors import digest, memory_chunks

log = logging.getLogger(__name__)

# Reciprocal rank fusion's constant (Cormack et al.): a result's score is the sum over the
# rankings of 1 / (K + rank), so agreeing rankings lift it and no score scale matters.
RRF_K = 60
# Candidates each ranking offers the fusion.
CANDIDATES = 50

Embed = Callable[[list[str]], Awaitable[list[Any]]]


@dataclass(frozen=True)
class Hit:
    """A message (`entry` its archive id) or a memory paragraph (`file`)."""

    excerpt: str
    entry: int | None = None
    file: str | None = None
    chat_id: str | None = None
    role: str | None = None
    created_at: float | None = None
    source: str | None = None

    @property
    def key(self) -> str:
        return f"#{self.entry}" if self.entry is not None else f"memory/{self.file}:{self.excerpt}"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.entry,
            "file": self.file,
            "chat": self.chat_id,
            "role": self.role,
            "date": _iso(self.created_at),
            "source": self.source,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True)
class Searcher:
    archive: Archive
    memory: MemoryStore | None  # None: the notes are not searched (a guest's chat)
    # With `[recall] embeddings_model`: texts to vectors, and the model's name.
    embed: Embed | None = None
    model: str | None = None

    async def find(self, query: str, window: Window, limit: int) -> list[Hit]:
        entries = await self.archive.search(query, window, CANDIDATES)
        messages = [(_message_hit(entry), entry.score) for entry in entries]
        searched = self.memory is not None and window.since is None
        chunks = memory_chunks(self.memory) if self.memory is not None and searched else []
        notes = _ranked_memory(query, chunks)
        text_ranking = _by_bm25(messages, notes)
        if self.embed is None or self.model is None:
            return [hit for hit, _ in text_ranking][:limit]
        try:
            vector_ranking = await self._by_vector(query, window, chunks)
        except BudgetReached as exc:  # the query is not embedded: its words still rank
            log.info("recall ranks by words alone: %s", exc)
            return [hit for hit, _ in text_ranking][:limit]
        return fuse([[hit for hit, _ in text_ranking], vector_ranking])[:limit]

    async def _by_vector(
        self, query: str, window: Window, chunks: list[tuple[str, str]]
    ) -> list[Hit]:
        assert self.embed is not None and self.model is not None
        [vector] = await self.embed([query])
        nearest = await self.archive.nearest(self.model, vector, window, CANDIDATES)
        by_id = {e.id: e for e in await self.archive.entries([i for i, _ in nearest])}
        scored = [(_message_hit(by_id[i]), score) for i, score in nearest if i in by_id]
        stored = await self.archive.memory_vectors(self.model, [digest(t) for _, t in chunks])
        for name, text in chunks:
            known = stored.get(digest(text))
            if known is not None:
                scored.append((Hit(_shorten(text), file=name), dot(vector, known)))
        scored.sort(key=lambda pair: pair[1], reverse=True)
        # Pointing away from the query, or across it: no kin, and no place in the fusion.
        return [hit for hit, score in scored[:CANDIDATES] if score > 0]


def fuse(rankings: Sequence[Sequence[Hit]]) -> list[Hit]:
    """Reciprocal rank fusion of the rankings; the first ranking's excerpt is kept."""
    scores: dict[str, float] = {}
    hits: dict[str, Hit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.key] = scores.get(hit.key, 0.0) + 1.0 / (RRF_K + rank)
            hits.setdefault(hit.key, hit)
    return [hits[key] for key in sorted(scores, key=lambda key: -scores[key])]


def _by_bm25(
    messages: list[tuple[Hit, float]], notes: list[tuple[Hit, float]]
) -> list[tuple[Hit, float]]:
    # Both scores are BM25 (lower is better), of two indexes: close enough to interleave.
    return sorted([*messages, *notes], key=lambda pair: pair[1])


def _message_hit(entry: ArchivedMessage) -> Hit:
    return Hit(
        entry.excerpt,
        entry=entry.id,
        chat_id=entry.chat_id,
        role=entry.role,
        created_at=entry.created_at,
        source=entry.source,
    )


def _ranked_memory(query: str, chunks: list[tuple[str, str]]) -> list[tuple[Hit, float]]:
    """The memory paragraphs matching `query`, with their BM25 score: an index made for the
    one search (memory files are small; an index kept in step with edits made by hand
    would cost more than it saves)."""
    match = fts_query(query)
    if match is None or not chunks:
        return []
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE notes USING fts5(file UNINDEXED, text)")
        connection.executemany("INSERT INTO notes (file, text) VALUES (?, ?)", chunks)
        rows = connection.execute(
            f"SELECT file, snippet(notes, 1, '', '', '…', {EXCERPT_TOKENS}), bm25(notes) "
            "FROM notes WHERE notes MATCH ? ORDER BY bm25(notes) LIMIT ?",
            (match, CANDIDATES),
        ).fetchall()
    finally:
        connection.close()
    return [(Hit(excerpt, file=file), score) for file, excerpt, score in rows]


def _shorten(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))
