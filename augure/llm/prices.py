"""Every model the configuration names, with its prices and the setting that holds them
(docs/reference/spend.md#prices-of-every-model): what the wrapper charges each call at, what a
refusal of an unpriced model names, and what `augure doctor` lists."""

from __future__ import annotations

from augure.config.budget import PRICE_KEYS, Fallback, Priced, Prices
from augure.config.llm import LLMConfig
from augure.config.settings import Config

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
