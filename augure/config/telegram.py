"""`[telegram]`: the bot, who may use it, and who of them is the owner (docs/telegram.md;
docs/security.md, "Guests")."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from augure.config.variables import Verbatim


def _split_ids(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, int):
        return [value]
    return value


class TelegramConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: SecretStr | None = None
    api_url: str = "https://api.telegram.org"
    allowed_users: Annotated[list[int], Verbatim] = []  # `11, 22`, as the plain variable
    # Who the owner is (docs/security.md, "Guests"); unset: the first of allowed_users. Every
    # other allowed user is a guest.
    owner: int | None = None
    streaming: bool = True
    # Follow-ups within this many seconds of the previous message are answered in the same
    # model call as it (docs/telegram.md, "Follow-ups"). 0: a lone message is answered at
    # once, and only what arrives while a turn of the chat runs is folded (a window made
    # every lone message wait for it).
    fold_seconds: float = Field(default=0.0, ge=0, le=60)
    # For where the Bot API is blocked (docs/telegram.md, "Behind a proxy"); unset, the
    # usual HTTPS_PROXY / ALL_PROXY / NO_PROXY variables apply.
    proxy: str | None = None
    # docs/security.md, "The reply is a way out": previews, the sources line.
    link_previews: bool = False
    show_sources: bool = True

    _ids = field_validator("allowed_users", mode="before")(_split_ids)

    @field_validator("proxy")
    @classmethod
    def _proxy_scheme(cls, value: str | None) -> str | None:
        if value and not value.lower().startswith(("http://", "https://", "socks5://")):
            # The URL is not echoed: it may carry the proxy's password.
            raise ValueError("a proxy URL starts with http://, https:// or socks5://")
        return value or None

    @model_validator(mode="after")
    def _owner_is_allowed(self) -> TelegramConfig:
        if self.owner is not None and self.owner not in self.allowed_users:
            raise ValueError("owner must be one of allowed_users")
        return self
