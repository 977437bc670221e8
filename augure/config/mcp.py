"""`[mcp.servers.NAME]` (docs/reference/mcp.md). Imports only pydantic: the config loader holds this
model."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

HANDLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A server's name is part of its tools' names (mcp__NAME__TOOL), which the model API limits.
SERVER_NAME = re.compile(r"[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*")


class McpServerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    url: str | None = None
    headers: dict[str, str] = {}
    enabled: bool = True
    deferred: bool = False
    read_only_tools: list[str] = []
    # Read-only tools that never send what they are given anywhere (a local lookup): their
    # arguments are not checked after outside content; every other one's are
    # (docs/security.md).
    local_tools: list[str] = []
    # Kept so older files load: every read-only tool not in `local_tools` is checked now.
    network_tools: list[str] = []
    timeout_seconds: float = Field(default=60.0, gt=0)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("set either command (stdio) or url (streamable HTTP)")
        if self.url is None and self.headers:
            raise ValueError("headers apply to a url server only")
        if self.command is None and (self.args or self.env):
            raise ValueError("args and env apply to a command server only")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


class McpSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: dict[str, McpServerSettings] = {}
    # How long after the bot starts a turn still waits for a server's first start to end, so
    # the first message already has its tools (docs/reference/mcp.md, "Lifecycle"); 0: never waits.
    startup_timeout_seconds: float = Field(default=15.0, ge=0)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpServerSettings]) -> dict[str, McpServerSettings]:
        for name in servers:
            if not SERVER_NAME.fullmatch(name) or len(name) > 20:
                raise ValueError(
                    f"server name {name!r}: letters, digits, - and single _ only, at most 20"
                )
        return servers


def expand(values: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`${ENV_VAR}` handles replaced by their values, read when the server starts; a missing
    variable is an error naming it (never its value)."""
    env = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise ValueError(f"the environment variable {name} is not set")
        return env[name]

    return {key: HANDLE.sub(value, text) for key, text in values.items()}
