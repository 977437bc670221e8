"""`[llm]`, `[[llm.fallbacks]]`, `[llm.roles]` and `[llm.coding]`: the chat model, its endpoint
and prices, which models stand in when it fails, which model does which kind of work, and the
model that writes skills (docs/reference/spend.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from augure.config.spend import Prices


class Fallback(Prices):
    """One `[[llm.fallbacks]]` entry: its own endpoint and key when they differ."""

    model: str
    base_url: str | None = None
    api_key: SecretStr | None = None


class LLMOverrides(BaseModel):
    """What `[llm.coding]` may change of `[llm]` for the model that writes skills."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    max_tokens: int | None = None


class CodingConfig(LLMOverrides, Prices):
    """`[llm.coding]`: the overrides, and the prices of its own model."""


class Roles(BaseModel):
    """`[llm.roles]`: a model name (the primary's or a fallback's) per kind of work."""

    model_config = ConfigDict(extra="forbid")

    summary: str | None = None
    heartbeat: str | None = None
    subagent: str | None = None
    skill: str | None = None


class LLMConfig(Prices):
    model: str = "gpt-4o-mini"
    base_url: str | None = None
    api_key: SecretStr | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    request_timeout_seconds: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    coding: CodingConfig = CodingConfig()
    # Voice notes go to the endpoint's /audio/transcriptions with this model (e.g. whisper-1).
    transcription_model: str | None = None
    # docs/reference/spend.md: tried in order when the primary fails in a way another model may not.
    fallbacks: list[Fallback] = Field(default_factory=list)
    roles: Roles = Roles()

    @model_validator(mode="after")
    def _roles_name_a_model(self) -> LLMConfig:
        known = [self.model, *(entry.model for entry in self.fallbacks)]
        for role, named in self.roles.model_dump().items():
            if named is not None and named not in known:
                raise ValueError(
                    f"roles.{role} names {named!r}, which is neither [llm] model nor the "
                    f"model of a [[llm.fallbacks]] entry ({', '.join(map(repr, known))})"
                )
        return self
