"""What model calls cost and may cost (docs/reference/spend.md): the prices a model is given
wherever it is named, and the `[budget]` caps. The settings alone, so that the configuration
never imports the gate that enforces them (augure/core/spend.py)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

# The two keys that price a model by its tokens, wherever the model is named.
PRICE_KEYS = "input_price_per_million and output_price_per_million"


class Prices(BaseModel):
    """USD per million tokens; 0 = unknown, never free
    (docs/reference/spend.md#prices-of-every-model)."""

    model_config = ConfigDict(extra="forbid")

    input_price_per_million: float = Field(default=0.0, ge=0)
    output_price_per_million: float = Field(default=0.0, ge=0)
    # Prompt tokens the endpoint reports as served from its cache; 0 = the input price.
    cached_input_price_per_million: float = Field(default=0.0, ge=0)

    @property
    def priced(self) -> bool:
        return bool(self.input_price_per_million or self.output_price_per_million)

    def dollars(
        self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0
    ) -> float | None:
        """The estimated cost in USD; None while no price is set."""
        if not self.priced:
            return None
        cached = min(cached_tokens, prompt_tokens)
        cached_rate = self.cached_input_price_per_million or self.input_price_per_million
        spent = (prompt_tokens - cached) * self.input_price_per_million + cached * cached_rate
        return (spent + completion_tokens * self.output_price_per_million) / 1_000_000


@dataclass(frozen=True)
class Priced:
    """A model some caller asks, its prices, and what to set to price it: the line a refusal
    and `augure doctor` show ("[agents.scout] input_price_per_million and ...")."""

    model: str
    prices: Prices
    setting: str


class BudgetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    daily_usd: float = Field(default=0.0, ge=0)  # 0 = no cap
    monthly_usd: float = Field(default=0.0, ge=0)
    warn_at: float = Field(default=0.8, gt=0, le=1)

    @property
    def capped(self) -> bool:
        return bool(self.daily_usd or self.monthly_usd)
