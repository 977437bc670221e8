"""`[tools.calendar]`: the CalDAV account the `calendar` tool reads and writes, and the limits
the declaration and the calls share."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError, field_validator

from augure.config.settings import Config
from augure.config.tools import settings_for
from augure.tools.base import describe

NAME = "calendar"
WRITES = frozenset({"create", "update", "delete"})
NETWORK_TIMEOUT = 20  # seconds per HTTP request; the tool's own timeout bounds the whole call
# One action's round trips (a write reads the event, then stores it): well inside the tool's
# timeout, so a stalled server gets this tool's own line.
CALL_SECONDS = 3 * NETWORK_TIMEOUT
NOT_CONFIGURED = "set [tools.calendar] url, username and password"


@settings_for(NAME)
class CalendarSettings(BaseModel):
    """`[tools.calendar]`."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = None
    username: str | None = None
    password: SecretStr | None = None
    default_calendar: str | None = None

    @field_validator("url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// (the CalDAV address of the account)")
        return value


def calendar_settings(config: Config) -> CalendarSettings | str:
    """The validated settings, or the one line saying what to set."""
    try:
        settings = CalendarSettings.model_validate(config.tools.section(NAME))
    except ValidationError as exc:
        return f"fix [tools.calendar]: {describe(exc)}"
    if not (settings.url and settings.username and settings.password):
        return NOT_CONFIGURED
    return settings


def missing_settings(config: Config) -> str | None:
    settings = calendar_settings(config)
    return settings if isinstance(settings, str) else None
