"""Spend on the model's side (docs/reference/spend.md): what a call is for, the port of the
spending gate every call passes, and the prices of every model the configuration names.

The kind of work (`chat`, `job`, `summary`, ...) travels with the task as a context variable,
so the one wrapper every caller goes through (`augure.llm.models.Models`) knows whom to bill
and which model `[llm.roles]` names, without each call site passing it along.

Each model a caller may name comes with its prices and the setting that holds them
(docs/reference/spend.md#prices-of-every-model): what the wrapper charges each call at, what a
refusal of an unpriced model names, and what `augure doctor` lists."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from augure.config.llm import Fallback, LLMConfig
from augure.config.settings import Config
from augure.config.spend import PRICE_KEYS, Priced, Prices
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
    """Checked before each model call, told of each answer (augure.core.spend.SpendCaps)."""

    async def check(self, kind: str, model: str, unpriced: str | None = None) -> None:
        """Raise BudgetReached when a cap is reached, or when a cap is set and `unpriced`
        names the setting that would price the model (the refusal is recorded)."""

    async def record(
        self, kind: str, model: str, prices: Prices, response: LLMResponse, sent: object = None
    ) -> None:
        """Count what the answer cost. Without reported usage, its tokens are estimated from
        `sent` (what the request carried) and the answer, and the call is marked estimated."""


# -- the prices of every model ------------------------------------------------------------

EMBEDDINGS_KEY = "[recall] embeddings_price_per_million"


def coding_priced(config: Config) -> Priced:
    """`[llm.coding]`'s model: its own prices, else those of the primary or the fallback
    that is the same model."""
    coding = config.llm.coding
    model = coding.model or config.llm.model
    prices: Prices = coding
    if not coding.priced:
        same: list[LLMConfig | Fallback] = [config.llm, *config.llm.fallbacks]
        prices = next((entry for entry in same if entry.model == model), coding)
    return Priced(model, prices, f"[llm.coding] {PRICE_KEYS}")


def own_models(config: Config) -> dict[str, Priced]:
    """Models a caller names that are neither the primary nor a fallback: each subagent's own
    `model` (the first priced table naming it wins) and the embeddings model."""
    listed = {config.llm.model, *(entry.model for entry in config.llm.fallbacks)}
    own: dict[str, Priced] = {}
    for name, spec in config.agents.named.items():
        if spec.model is None or spec.model in listed:
            continue
        if spec.model not in own or (spec.priced and not own[spec.model].prices.priced):
            own[spec.model] = Priced(spec.model, spec, f"[agents.{name}] {PRICE_KEYS}")
    embeddings = config.recall.embeddings_model
    if embeddings is not None:
        price = config.recall.embeddings_price_per_million
        own[embeddings] = Priced(embeddings, Prices(input_price_per_million=price), EMBEDDINGS_KEY)
    return own


def priced_models(config: Config) -> list[Priced]:
    """Every model a call may go to: the primary, the fallbacks, the callers' own models and
    the skill-writing one (when `[llm.coding]` names another)."""
    models = [Priced(config.llm.model, config.llm, f"[llm] {PRICE_KEYS}")]
    models += [
        Priced(entry.model, entry, f"{PRICE_KEYS} in its [[llm.fallbacks]] entry")
        for entry in config.llm.fallbacks
    ]
    models += own_models(config).values()
    coding = coding_priced(config)
    if coding.prices is config.llm.coding:  # not one of the models above
        models.append(coding)
    return models
