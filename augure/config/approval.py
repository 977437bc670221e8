"""`[approval]`: when a call waits for the owner's tap, and for how long
(docs/reference/approvals.md; docs/security.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ApprovalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    timeout_seconds: float = Field(default=120.0, gt=0)
    # After outside content was read: ask before a fetch that could carry data out
    # (docs/security.md, "No leak after outside content"). "off": the old behaviour.
    after_untrusted: Literal["ask", "off"] = "ask"
    untrusted_fetches: int = Field(default=3, ge=0)
