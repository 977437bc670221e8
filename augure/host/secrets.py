"""Secret values never leave the process: every text that goes out passes through here."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import Any

from augure.config.mcp import McpSettings
from augure.config.settings import Config

# Tool secrets read from the environment
# (docs/reference/configuration.md#plain-environment-variables), besides those in the config tree.
SECRET_VARIABLES = ("TAVILY_API_KEY", "EXA_API_KEY", "GITHUB_TOKEN", "EMAIL_PASSWORD")
SECRET_KEYS = ("api_key", "token", "password", "secret")
HANDLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MIN_LENGTH = 4  # shorter values would redact ordinary words


def discover(config: Config, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every configured secret value, by the name shown in its place."""
    env = os.environ if environ is None else environ
    found = dict(config.secrets())
    for name in SECRET_VARIABLES:
        if env.get(name):
            found[name] = env[name]

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for item in node:
                walk(item, path)
        elif isinstance(node, str):
            for handle in HANDLE.findall(node):  # `${ENV_VAR}` names a secret
                if env.get(handle):
                    found[handle] = env[handle]
            if path.rsplit(".", 1)[-1] in SECRET_KEYS and not HANDLE.search(node):
                found[path.strip(".").upper().replace(".", "_")] = node

    walk(config.tools.model_extra or {}, "tools")
    found.update(mcp_secrets(config.mcp, env))
    # Every value of a preset's headers is a secret, written literally or not
    # (docs/reference/secrets.md#secrets).
    presets = (config.tools.model_extra or {}).get("http", {}).get("presets", {})
    for preset, table in presets.items() if isinstance(presets, dict) else ():
        headers = table.get("headers", {}) if isinstance(table, dict) else {}
        for header, value in headers.items() if isinstance(headers, dict) else ():
            if isinstance(value, str) and not HANDLE.search(value):
                name = f"TOOLS_HTTP_PRESETS_{preset}_HEADERS_{header}"
                found[name.upper().replace("-", "_")] = value
    return {name: value for name, value in found.items() if len(value) >= MIN_LENGTH}


def mcp_secrets(mcp: McpSettings, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the MCP servers are handed: the values of `${ENV}` handles in env and headers,
    and every literal value of either, which is how a key is written there
    (docs/reference/mcp.md)."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for server, settings in mcp.servers.items():
        for table, values in (("ENV", settings.env), ("HEADERS", settings.headers)):
            for key, value in values.items():
                handles = HANDLE.findall(value)
                found.update({handle: env[handle] for handle in handles if env.get(handle)})
                if not handles:
                    name = f"MCP_{server}_{table}_{key}".upper().replace("-", "_")
                    found.update(_with_credential(name, value))
    return {name: value for name, value in found.items() if len(value) >= MIN_LENGTH}


def _with_credential(name: str, value: str) -> dict[str, str]:
    """The value, and for `Scheme credential` (`Bearer abc`) the credential alone: a server
    that reads the header sees, and may log or echo, the token without its scheme."""
    scheme, _, credential = value.partition(" ")
    if scheme and credential.strip() and " " not in credential.strip():
        return {name: value, f"{name}_CREDENTIAL": credential.strip()}
    return {name: value}


class Redactor:
    def __init__(self, secrets: Mapping[str, str]) -> None:
        # Longest first, so a secret containing another is replaced whole.
        self._pairs = sorted(
            ((value, f"[REDACTED:{name}]") for name, value in secrets.items()),
            key=lambda pair: len(pair[0]),
            reverse=True,
        )

    @classmethod
    def from_config(cls, config: Config) -> Redactor:
        return cls(discover(config))

    @classmethod
    def from_mcp(cls, mcp: McpSettings) -> Redactor:
        """Only what the MCP servers are handed, for their logs when no config is at hand."""
        return cls(mcp_secrets(mcp))

    def __call__(self, text: str) -> str:
        for value, replacement in self._pairs:
            if value in text:
                text = text.replace(value, replacement)
        return text

    def value(self, node: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if isinstance(node, str):
            return self(node)
        if isinstance(node, dict):
            return {key: self.value(item) for key, item in node.items()}
        if isinstance(node, list):
            return [self.value(item) for item in node]
        return node


class RedactingFilter(logging.Filter):
    """Applied to log handlers: a secret in a log line is replaced before it is written."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = self.redactor(message)
        if record.exc_info and record.exc_info[1] is not None:
            cleaned += "\n" + self.redactor(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        record.msg, record.args = cleaned, None
        return True
