"""Configuration: one TOML file, `AUGURE__SECTION__KEY` overrides, and a few plain variables.

Precedence, highest first: `AUGURE__SECTION__KEY` variables, the plain variables of
docs/reference/configuration.md#plain-environment-variables (`TELEGRAM_BOT_TOKEN`,
`OPENAI_BASE_URL`, ...), the TOML file, the defaults below.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from augure.common.errors import UsageError
from augure.common.folders import workspace_name
from augure.config import tools as tool_settings
from augure.config.agent import AgentConfig, MemoryConfig
from augure.config.agents import AgentsConfig
from augure.config.approval import ApprovalConfig
from augure.config.background import BackgroundConfig
from augure.config.dashboard import DashboardConfig
from augure.config.execution import CodeModeConfig, SandboxConfig
from augure.config.guests import GuestsConfig
from augure.config.heartbeat import HeartbeatConfig
from augure.config.keys import Keys
from augure.config.limits import Profile
from augure.config.llm import LLMConfig
from augure.config.mcp import McpSettings
from augure.config.recall import RecallConfig
from augure.config.scheduler import SchedulerConfig
from augure.config.skills import SkillsConfig
from augure.config.spend import BudgetConfig
from augure.config.telegram import TelegramConfig
from augure.config.tools import ToolsConfig
from augure.config.variables import DELIMITER, PREFIX, NotJson, overlay
from augure.config.voice import VoiceConfig


class ConfigError(UsageError):
    """A configuration problem, already phrased as the one line the user sees."""


class Config(BaseModel):
    # Read by `load_config`: the file, the plain variables, then the `AUGURE__` variables laid
    # over them (augure/config/variables.py).
    model_config = ConfigDict(extra="forbid", validate_default=True)

    llm: LLMConfig = LLMConfig()
    agent: AgentConfig = AgentConfig()
    telegram: TelegramConfig = TelegramConfig()
    approval: ApprovalConfig = ApprovalConfig()
    memory: MemoryConfig = MemoryConfig()
    scheduler: SchedulerConfig = SchedulerConfig()
    background: BackgroundConfig = BackgroundConfig()  # docs/background.md
    sandbox: SandboxConfig = SandboxConfig()
    code_mode: CodeModeConfig = CodeModeConfig()
    skills: SkillsConfig = SkillsConfig()
    tools: ToolsConfig = ToolsConfig()
    # docs/reference/limits.md; the models are in augure/config/limits.py
    profiles: dict[str, Profile] = {}
    # docs/reference/personas.md#heartbeat, augure/scheduler/heartbeat.py
    heartbeat: HeartbeatConfig = HeartbeatConfig()
    mcp: McpSettings = McpSettings()
    # docs/reference/execution.md#subagents: subagents for the `task` tool
    agents: AgentsConfig = AgentsConfig()
    dashboard: DashboardConfig = DashboardConfig()  # docs/reference/dashboard.md, augure/dashboard
    recall: RecallConfig = RecallConfig()  # docs/recall.md
    voice: VoiceConfig = VoiceConfig()  # docs/voice.md: spoken replies
    budget: BudgetConfig = BudgetConfig()  # docs/reference/spend.md
    guests: GuestsConfig = GuestsConfig()  # docs/security.md#guests

    # Not a config key: where the state lives. Set by load_config.
    home: Path = Field(default=Path("~/.augure"), exclude=True)
    # The file the config was read from (private: no key or variable can set it).
    _file: Path | None = PrivateAttr(default=None)

    @property
    def file(self) -> Path | None:
        return self._file

    @property
    def zone(self) -> str:
        """The agent's IANA time zone: configured, else the host's, else UTC."""
        return self.agent.timezone or host_zone()

    @property
    def owner_chat(self) -> str | None:
        """The owner's private chat (`[telegram] owner`, else the first allowed user): where
        jobs and skills deliver when no chat is known."""
        owner, users = self.telegram.owner, self.telegram.allowed_users
        return str(owner if owner is not None else users[0]) if users else None

    def guest_chat(self, chat_id: str | None) -> bool:
        """A Telegram chat other than the owner's private one: a guest's, or a group. The
        terminal and the bot's own work (jobs, skills: no numeric id) are the owner's."""
        owner = self.owner_chat
        numeric = chat_id is not None and chat_id.lstrip("-").isdigit()
        return owner is not None and numeric and chat_id != owner

    def inbox_dir(self, chat_id: str | None) -> Path:
        """Where the documents sent in a chat are kept: the owner's in `inbox/` (as before
        guests had their own), each other chat's in `inboxes/CHAT_ID/`."""
        if chat_id is not None and self.guest_chat(chat_id):
            return self.home / "inboxes" / workspace_name(chat_id)
        return self.home / "inbox"

    @property
    def memory_dir(self) -> Path:
        return self.memory.path or self.home / "memory"

    @property
    def db_path(self) -> Path:
        return self.home / "state.db"

    def secrets(self) -> dict[str, str]:
        """Configured secret values by the name shown in place of them."""
        found: dict[str, str] = {}
        candidates = {
            "TELEGRAM_BOT_TOKEN": self.telegram.token,
            "OPENAI_API_KEY": self.llm.api_key,
            "LLM_CODING_API_KEY": self.llm.coding.api_key,
        }
        for number, fallback in enumerate(self.llm.fallbacks, 1):
            candidates[f"LLM_FALLBACK_{number}_API_KEY"] = fallback.api_key
        for name, secret in candidates.items():
            if secret is not None and secret.get_secret_value():
                found[name] = secret.get_secret_value()
        return found


# Plain variables of docs/reference/configuration.md#plain-environment-variables and where each
# lands in the config tree.
PLAIN_VARIABLES: dict[str, tuple[str, str]] = {
    "TELEGRAM_BOT_TOKEN": ("telegram", "token"),
    "AUGURE_TELEGRAM_API_URL": ("telegram", "api_url"),
    "AUGURE_ALLOWED_USERS": ("telegram", "allowed_users"),
    "OPENAI_API_KEY": ("llm", "api_key"),
    "OPENAI_BASE_URL": ("llm", "base_url"),
    "AUGURE_MODEL": ("llm", "model"),
}

ENV_FILE_NAME = ".env"
# Variables that `load_env_file` took from a file (name -> file), so that an error about one
# says where to fix it.
_FROM_ENV_FILE: dict[str, Path] = {}


def host_zone() -> str:
    name = os.environ.get("TZ", "").lstrip(":")
    if not name:
        try:
            target = os.readlink("/etc/localtime")
        except OSError:
            target = ""
        name = target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else ""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return "UTC"
    return name


def default_home(environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("AUGURE_HOME") or "~/.augure").expanduser()


def load_env_file(home: Path | None = None) -> Path | None:
    """Put `$AUGURE_HOME/.env` (written by `augure init`, mode 600) into the environment.

    The process's own environment wins over the file. Called once by the command line, so
    the secrets it holds reach every part that reads variables (tools, redaction) the same way
    as with `docker compose`'s `env_file`.
    """
    file = (home or default_home()) / ENV_FILE_NAME
    if not file.is_file():
        return None
    for name, value in dotenv_values(file).items():
        if value is not None and name not in os.environ:
            os.environ[name] = value
            _FROM_ENV_FILE[name] = file
    return file


def load_config(path: Path | str | None = None, *, home: Path | None = None) -> Config:
    """Read the config, or raise ConfigError with one line naming the key to fix."""
    home = (home or default_home()).expanduser()
    file = Path(path).expanduser() if path else home / "augure.toml"
    data: dict[str, Any] = {}
    if path and not file.is_file():
        raise ConfigError(f"config file not found: {file}")
    if file.is_file():
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{file}: not valid TOML ({exc})") from None
    plain: dict[tuple[str, str], str] = {}
    for variable, (section, key) in PLAIN_VARIABLES.items():
        value = os.environ.get(variable)
        if value:
            data.setdefault(section, {})
            if isinstance(data[section], dict):
                data[section][key] = value
                plain[(section, key)] = variable
    _check_variables()
    try:
        config = Config.model_validate(overlay(data, Config, os.environ))
        _check_tool_sections(config)
    except NotJson as exc:
        told = f" (set in {_FROM_ENV_FILE[exc.name]})" if exc.name in _FROM_ENV_FILE else ""
        raise ConfigError(f"config error: {exc}{told}") from None
    except ValidationError as exc:
        raise ConfigError(_one_line(exc, file, plain)) from None
    except _InvalidToolSection as exc:
        # Re-rooted under tools.NAME so the line names the whole key.
        raise ConfigError(_one_line(exc.error, file, plain, ("tools", exc.name))) from None
    except _UnknownToolSection as exc:
        raise ConfigError(
            _unknown_line(exc.loc, KEYS.valid(exc.loc), file, plain, exc.kind)
        ) from None
    config.home = home
    config._file = file
    return config


def source_of(config: Config, section: str, key: str) -> str:
    """Where `[section] key` came from, phrased for a line telling the owner what to fix."""
    file = config.file or config.home / "augure.toml"
    plain = {where: name for name, where in PLAIN_VARIABLES.items() if os.environ.get(name)}
    named = {name.upper() for name in os.environ}
    if f"AUGURE__{section.upper()}__{key.upper()}" in named or (section, key) in plain:
        return _source((section, key), file, plain)
    try:
        in_file = key in tomllib.loads(file.read_text(encoding="utf-8")).get(section, {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        in_file = False
    if in_file:
        return _source((section, key), file, plain)
    variable = next((n for n, where in PLAIN_VARIABLES.items() if where == (section, key)), None)
    hint = f"{variable} or " if variable else ""
    return f"not set: set {hint}[{section}] {key} in {file}"


class _UnknownToolSection(ConfigError):
    def __init__(self, loc: tuple[str, ...], kind: str) -> None:
        self.loc = loc
        self.kind = kind


class _InvalidToolSection(ConfigError):
    def __init__(self, name: str, error: ValidationError) -> None:
        self.name = name
        self.error = error


def _check_tool_sections(config: Config) -> None:
    """Each `[tools.NAME]` must be a tool's declared section holding only that tool's keys."""
    for name, value in (config.tools.model_extra or {}).items():
        if value == {} and tool_settings.may_declare(name):
            continue  # the empty tables `augure init` writes: nothing to import and check
        model = tool_settings.settings_model(name) if isinstance(value, dict) else None
        if model is None:
            kind = "section" if isinstance(value, dict) else "key"
            raise _UnknownToolSection(("tools", name), kind)
        try:
            model.model_validate(value)
        except ValidationError as exc:
            raise _InvalidToolSection(name, exc) from None


KEYS = Keys(Config, ToolsConfig, tool_settings.settings_model, tool_settings.declared)


def _check_variables() -> None:
    """Refuse an `AUGURE__` variable that names no setting: a typo would otherwise leave the
    default silently in force."""
    for name in os.environ:
        if not name.upper().startswith(PREFIX):
            continue
        parts = name[len(PREFIX) :].lower().split(DELIMITER)
        _, index = KEYS.walk(parts)
        if index is None:
            continue
        table = ".".join(parts[:index])
        where = f"key {parts[index]!r} in [{table}]" if index else f"section {parts[0]!r}"
        nearest = KEYS.nearest(parts)
        if nearest is not None:
            where += f"; did you mean {PREFIX}{'__'.join(nearest).upper()}?"
        told = f" (set in {_FROM_ENV_FILE[name]})" if name in _FROM_ENV_FILE else ""
        raise ConfigError(f"config error: unknown setting {name} ({where}){told}")


def _source(loc: tuple[str, ...], file: Path, plain: dict[tuple[str, str], str]) -> str:
    """Where the value at `loc` came from: an environment variable, the .env file or the toml."""
    variable = "AUGURE__" + "__".join(part.upper() for part in loc)
    named = {name.upper(): name for name in os.environ}
    if variable in named:
        return _variable_source(named[variable])
    if len(loc) == 2 and (loc[0], loc[1]) in plain:
        return _variable_source(plain[(loc[0], loc[1])])
    if len(loc) == 1:
        return f"{file}, section [{loc[0]}]"
    section = ".".join(loc[:-1])
    return f"{file}, key {loc[-1]} in [{section}]"


def _variable_source(name: str) -> str:
    if name in _FROM_ENV_FILE:
        return f"{name} in {_FROM_ENV_FILE[name]}"
    return f"the environment variable {name}"


def _unknown_line(
    loc: tuple[str, ...],
    valid: list[str],
    file: Path,
    plain: dict[tuple[str, str], str],
    kind: str | None = None,
) -> str:
    # difflib loads only for an error's "did you mean" (docs/performance.md).
    import difflib

    key = ".".join(loc)
    close = difflib.get_close_matches(loc[-1], valid, n=1, cutoff=0.6)
    hint = f"; did you mean {'.'.join((*loc[:-1], close[0]))}?" if close else ""
    kind = kind or ("section" if len(loc) == 1 else "key")
    return f"config error: {key}: unknown {kind}{hint} (from {_source(loc, file, plain)})"


def _one_line(
    exc: ValidationError,
    file: Path,
    plain: dict[tuple[str, str], str],
    root: tuple[str, ...] = (),
) -> str:
    errors = exc.errors()
    # An unknown key is the likelier typo behind the other errors (a required key "missing").
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    # A list item's index (allowed_users.0) is not a key the owner can look up.
    loc = (*root, *(str(part) for part in first["loc"] if not isinstance(part, int)))
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    if first["type"] == "extra_forbidden":
        return _unknown_line(loc, KEYS.valid(loc), file, plain) + more
    key = ".".join(loc)
    return f"config error: {key}: {first['msg']} (from {_source(loc, file, plain)}){more}"
