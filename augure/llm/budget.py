"""What a model call is for, and the port of the spending gate every call passes
(docs/reference/spend.md).

The kind of work (`chat`, `job`, `summary`, ...) travels with the task as a context variable,
so the one wrapper every caller goes through (`augure.llm.models.Models`) knows whom to bill
and which model `[llm.roles]` names, without each call site passing it along."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from augure.config.budget import Prices
from augure.llm.client import LLMResponse
from augure.llm.faults import Fault, LLMError

# The kinds of work spend is split by. A turn's own calls are billed to the work that
# started it; a summary, a subagent or a transcription to itself.
CHAT, JOB, SKILL, HEARTBEAT = "chat", "job", "skill", "heartbeat"
SUBAGENT, SUMMARY, SKILL_GENERATION, TRANSCRIPTION = (
    "subagent",
    "summary",
    "skill generation",
    "transcription",
)
# Spoken replies (docs/voice.md): counted by characters, at the voice's own price.
SPEECH = "speech"
# Texts turned into vectors for recall (docs/recall.md#vectors), whoever asked.
EMBEDDING = "embedding"
KINDS = (
    CHAT,
    JOB,
    SKILL,
    HEARTBEAT,
    SUBAGENT,
    SUMMARY,
    SKILL_GENERATION,
    TRANSCRIPTION,
    SPEECH,
    EMBEDDING,
)
# Work no one waits for: skipped, not answered, when a cap is reached.
BACKGROUND = (JOB, SKILL, HEARTBEAT)

WORK: ContextVar[str] = ContextVar("augure_work", default=CHAT)


@contextmanager
def working_as(kind: str) -> Iterator[None]:
    """Model calls made inside are billed to `kind` (and sent to its `[llm.roles]` model)."""
    token = WORK.set(kind)
    try:
        yield
    finally:
        WORK.reset(token)


class BudgetReached(LLMError):
    """A `[budget]` cap is reached, or the model has no price while a cap is set: the call was
    not made. The message names the cap or the price setting to add."""

    def __init__(self, message: str, cap: str) -> None:
        super().__init__(message, fault=Fault.BUDGET)
        self.cap = cap  # "daily", "monthly", or "price": the model has none

    @property
    def why(self) -> str:
        """A few words for a skipped run: "daily cap", "no price"."""
        return "no price" if self.cap == "price" else f"{self.cap} cap"


class SpendGate(Protocol):
    """Checked before each model call, told of each answer (augure.core.spend.Budget)."""

    async def check(self, kind: str, model: str, unpriced: str | None = None) -> None:
        """Raise BudgetReached when a cap is reached, or when a cap is set and `unpriced`
        names the setting that would price the model (the refusal is recorded)."""

    async def record(
        self, kind: str, model: str, prices: Prices, response: LLMResponse, sent: object = None
    ) -> None:
        """Count what the answer cost. Without reported usage, its tokens are estimated from
        `sent` (what the request carried) and the answer, and the call is marked estimated."""
