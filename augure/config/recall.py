"""`[recall]`: the archive's optional vectors (docs/recall.md). The settings alone, so that
the configuration never imports what embeds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RecallConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Unset: full-text ranking alone, and no request to `/embeddings` is ever made.
    embeddings_model: str | None = None
    # Texts sent in one `/embeddings` request by the background indexer.
    embeddings_batch: int = Field(default=64, ge=1, le=2048)
    # USD per million tokens sent to `/embeddings`; 0 = unknown (not called under a cap).
    embeddings_price_per_million: float = Field(default=0.0, ge=0)
