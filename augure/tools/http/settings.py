"""`[tools.http]`: the request's limits, private networks, and the owner's presets (an API's
base URL and the headers, credentials included, that go with it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from augure.common.errors import NotDone
from augure.config.tools import settings_for
from augure.tools.arguments import describe

if TYPE_CHECKING:
    from augure.config.settings import Config


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str
    headers: dict[str, str] = {}

    @field_validator("base_url")
    @classmethod
    def _absolute(cls, value: str) -> str:
        url = httpx.URL(value)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"must be an absolute http(s) URL, not {value!r}")
        return value


@settings_for("http")
class HttpSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_seconds: float = Field(default=30.0, gt=0, le=300)
    max_response_bytes: int = Field(default=200_000, gt=0)
    allow_private_networks: bool = False
    presets: dict[str, Preset] = {}


class RequestError(NotDone):
    """A request that cannot be made; the message is fit for the model."""


def load_settings(config: Config) -> HttpSettings:
    """The `[tools.http]` table, validated; RequestError naming the key when it is wrong."""
    try:
        return HttpSettings.model_validate(config.tools.section("http"))
    except ValidationError as exc:
        raise RequestError(f"fix [tools.http]: {describe(exc)}") from None


def check_config(config: Config) -> str | None:
    try:
        load_settings(config)
    except RequestError as exc:
        return str(exc)
    return None
