"""`[tools.email]`: the mailbox's IMAP and SMTP servers and the login; EMAIL_USERNAME and
EMAIL_PASSWORD override the file's values."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from augure.config.settings import Config
from augure.config.tools import settings_for
from augure.tools.arguments import describe
from augure.tools.email.addresses import is_address

NOT_CONFIGURED = "set [tools.email] imap_host, smtp_host and EMAIL_USERNAME/EMAIL_PASSWORD"
NETWORK_TIMEOUT = 30.0  # seconds an IMAP or SMTP server has to answer
Security = Literal["ssl", "starttls", "none"]


@settings_for("email")
class EmailConfig(BaseModel):
    """`[tools.email]`; EMAIL_USERNAME and EMAIL_PASSWORD override the file's values."""

    model_config = ConfigDict(extra="forbid")

    imap_host: str | None = None
    imap_port: int | None = Field(default=None, gt=0, lt=65536)
    imap_security: Security = "ssl"
    smtp_host: str | None = None
    smtp_port: int | None = Field(default=None, gt=0, lt=65536)
    smtp_security: Security = "starttls"
    username: str | None = None
    password: SecretStr | None = None
    from_address: str | None = None

    @property
    def imap_port_or_default(self) -> int:
        return self.imap_port or {"ssl": 993}.get(self.imap_security, 143)

    @property
    def smtp_port_or_default(self) -> int:
        return self.smtp_port or {"ssl": 465, "starttls": 587}.get(self.smtp_security, 25)

    @property
    def sender(self) -> str:
        return self.from_address or self.username or ""


def email_settings(config: Config) -> EmailConfig | str:
    """The validated settings, or the one line saying what to fix."""
    data = dict(config.tools.section("email"))
    for variable, key in (("EMAIL_USERNAME", "username"), ("EMAIL_PASSWORD", "password")):
        if os.environ.get(variable):
            data[key] = os.environ[variable]
    try:
        settings = EmailConfig.model_validate(data)
    except ValidationError as exc:
        return f"fix [tools.email]: {describe(exc)}"
    if not (settings.imap_host and settings.smtp_host and settings.username and settings.password):
        return NOT_CONFIGURED
    if settings.from_address and not is_address(settings.from_address):
        return "fix [tools.email] from_address: not a valid email address"
    return settings


def settings_problem(config: Config) -> str | None:
    settings = email_settings(config)
    return settings if isinstance(settings, str) else None
