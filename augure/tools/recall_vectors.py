"""The archive's optional vectors (docs/recall.md#vectors): texts embedded through the
endpoint's `/embeddings`, in batches, by a background task that never delays a reply.

Nothing here is built unless `[recall] embeddings_model` is set: without it no embedding
request is ever made.
"""

from __future__ import annotations

import hashlib
import logging
from array import array
from typing import TYPE_CHECKING

from augure.common.repeating import Repeating
from augure.memory.store import MemoryStore
from augure.store.archive import Archive
from augure.store.vectors import normalised

if TYPE_CHECKING:
    from augure.config.recall import RecallConfig
    from augure.llm.models import Models

log = logging.getLogger(__name__)

# Seconds between two looks for new messages; a turn adds a few, so one request a look.
INTERVAL_SECONDS = 2.0
# A failed request (endpoint down, no such model) is tried again this much later.
BACKOFF_SECONDS = 60.0
# Characters of one text sent; the rest of a long tool result adds little to its meaning.
MAX_TEXT_CHARS = 8_000


class Embedder:
    """Texts to unit-length vectors, `batch` texts a request, each request through the model
    wrapper: checked against `[budget]` and counted like any model call."""

    def __init__(self, models: Models, settings: RecallConfig) -> None:
        assert settings.embeddings_model is not None
        self.models = models
        self.model = settings.embeddings_model
        self.batch = settings.embeddings_batch

    async def embed(self, texts: list[str]) -> list[array[float]]:
        vectors: list[array[float]] = []
        for start in range(0, len(texts), self.batch):
            chunk = [text[:MAX_TEXT_CHARS] or " " for text in texts[start : start + self.batch]]
            vectors += [normalised(vector) for vector in await self.models.embed(self.model, chunk)]
        return vectors


def memory_chunks(memory: MemoryStore) -> list[tuple[str, str]]:
    """(file, paragraph) of every memory file: what `recall` ranks of them."""
    chunks = []
    for name, _size in memory.list():
        if not name.endswith((".md", ".txt")):
            continue
        try:
            text = memory.read(name)
        except (OSError, ValueError):
            continue
        chunks += [(name, part.strip()) for part in text.split("\n\n") if part.strip()]
    return chunks


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Indexer:
    """Embeds what the archive and the memory files hold that has no vector yet."""

    def __init__(self, embedder: Embedder, archive: Archive, memory: MemoryStore) -> None:
        self.embedder = embedder
        self.archive = archive
        self.memory = memory
        self.watch = Repeating(
            "recall-indexer",
            self.catch_up,
            INTERVAL_SECONDS,
            # The endpoint, the model: said once a minute at most.
            failure=lambda exc: log.warning("could not embed the archive: %s", exc),
            backoff=BACKOFF_SECONDS,
        )
        self.start, self.stop = self.watch.start, self.watch.stop

    async def catch_up(self) -> int:
        """Embed every text without a vector; the number embedded."""
        done = await self._memory()
        model = self.embedder.model
        while pending := await self.archive.unembedded(model, self.embedder.batch):
            vectors = await self.embedder.embed([entry.text for entry in pending])
            ids = [entry.id for entry in pending]
            await self.archive.store_vectors(model, list(zip(ids, vectors, strict=True)))
            done += len(pending)
        return done

    async def _memory(self) -> int:
        texts = {digest(text): text for _name, text in memory_chunks(self.memory)}
        model = self.embedder.model
        known = await self.archive.memory_vectors(model, list(texts))
        missing = [key for key in texts if key not in known]
        if not missing:
            return 0
        vectors = await self.embedder.embed([texts[key] for key in missing])
        await self.archive.store_memory_vectors(model, list(zip(missing, vectors, strict=True)))
        return len(missing)
