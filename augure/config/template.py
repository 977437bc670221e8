"""The commented `augure.toml` that `augure init` writes, generated from the config models.

Every section and key comes from the models themselves (`Config`, and the model each
built-in tool declares for its `[tools.NAME]`), so the file cannot list a key that does not
exist or miss one that does. Defaults are written commented out: the code keeps owning them,
and the owner uncomments what they change. Values `augure init` asked for are written active.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from augure.config.settings import Config
from augure.config.tools import ToolsConfig, declared

HEADER = """\
# Augure configuration. Every section and key is listed with its default, commented out;
# uncomment a line to change it. Secrets (the bot token, API keys, passwords) are best kept
# out of this file: put them in the environment or in {env_file} (mode 600).
# Any key can also be set as AUGURE__SECTION__KEY (e.g. AUGURE__AGENT__MAX_LOOPS=5).
"""

# What each key means, shown above it; the tests check that every key has a line here.
DESCRIPTIONS: dict[str, str] = {
    "llm": "The chat model: any OpenAI-compatible endpoint (OpenAI, OpenRouter, Ollama, vLLM).",
    "llm.model": "model name (env AUGURE_MODEL)",
    "llm.base_url": "endpoint root, e.g. http://localhost:11434/v1; unset = OpenAI "
    "(env OPENAI_BASE_URL)",
    "llm.api_key": "API key; prefer OPENAI_API_KEY in the environment or .env",
    "llm.max_tokens": "most tokens in one answer; unset = the endpoint's default",
    "llm.request_timeout_seconds": "seconds to wait for one request",
    "llm.max_retries": "retries of 5xx, 429, timeouts and connection errors, with backoff",
    "llm.transcription_model": "for voice notes, e.g. whisper-1; unset = voice notes declined",
    "llm.input_price_per_million": "for /usage cost estimates; 0 = unknown",
    "llm.output_price_per_million": "for /usage cost estimates; 0 = unknown",
    "llm.cached_input_price_per_million": "for prompt tokens the endpoint served from its "
    "cache; 0 = the input price",
    "llm.fallbacks": "[[llm.fallbacks]] tables (model, base_url, api_key, input_, output_ and "
    "cached_input_price_per_million), tried in order when the model is down or rate-limited",
    "llm.roles": "Which model does which work; each names [llm] model or a fallback's model.",
    "llm.roles.summary": "summaries of long histories; unset = [llm] model",
    "llm.roles.heartbeat": "the heartbeat's turns; unset = [llm] model",
    "llm.roles.subagent": "subagents without a model of their own; unset = [llm] model",
    "llm.roles.skill": "skill runs and skill writing; unset = [llm] model",
    "budget": "Spending caps in USD over every model call (docs/reference/spend.md).",
    "budget.daily_usd": "cap per day in the agent timezone; 0 = no cap",
    "budget.monthly_usd": "cap per calendar month; 0 = no cap",
    "budget.warn_at": "share of a cap at which the owner is told once",
    "llm.coding": "Overrides of [llm] used to write skills (a stronger model, say).",
    "llm.coding.model": "model name",
    "llm.coding.base_url": "endpoint root",
    "llm.coding.api_key": "API key; prefer the environment",
    "llm.coding.max_tokens": "most tokens in one answer",
    "llm.coding.input_price_per_million": "USD; 0 = the price of [llm] or of the fallback "
    "that is the same model, else unknown (not called under a [budget] cap)",
    "llm.coding.output_price_per_million": "USD; 0 = as input_price_per_million",
    "llm.coding.cached_input_price_per_million": "for cached prompt tokens; 0 = the input price",
    "agent": "The tool loop.",
    "agent.max_loops": "rounds of tool calls per turn, then one text-only answer",
    "agent.token_budget": "tokens per turn; 0 = no limit",
    "agent.timezone": "IANA zone, e.g. Europe/Paris; unset = the host's (TZ)",
    "agent.persona": "extra system text, e.g. Answer in French unless asked otherwise.",
    "agent.history_tokens": "compact the conversation above this many (estimated) tokens",
    "telegram": "The Telegram bot.",
    "telegram.token": "bot token from @BotFather; prefer TELEGRAM_BOT_TOKEN in the environment",
    "telegram.api_url": "root of the Bot API server (env AUGURE_TELEGRAM_API_URL)",
    "telegram.allowed_users": "Telegram user ids that may use the bot (env AUGURE_ALLOWED_USERS)",
    "telegram.owner": "the owner's user id, one of allowed_users; unset = the first of them. "
    "Every other allowed user is a guest (docs/security.md#guests)",
    "telegram.streaming": "show long answers growing while the model writes",
    "telegram.fold_seconds": "messages this close to the previous one are answered in one "
    "model call; 0 = answer at once, fold only those sent while a turn runs",
    "telegram.proxy": "http://, https:// or socks5:// URL for the Bot API; unset = "
    "HTTPS_PROXY / ALL_PROXY",
    "telegram.link_previews": "link previews in answers of work that read no outside content; "
    "off by default: Telegram's servers fetch a previewed link themselves, unasked",
    "telegram.show_sources": "an answer that drew on outside content ends with a line naming "
    "its sources",
    "approval": "Approval of write and high-risk tool calls.",
    "approval.enabled": "false only in a trusted lab: writes then run without asking",
    "approval.timeout_seconds": "no answer in time = rejected",
    "approval.after_untrusted": "ask: after outside content, a call sending what the model "
    "composed (a URL, a header, an MCP argument) asks first; off: never",
    "approval.untrusted_fetches": "links to sites only outside content named (and clicks, "
    "typed text) followed unasked per turn; a choice among more than 256 links weighs more",
    "memory": "Markdown memory files.",
    "memory.path": "folder; unset = $AUGURE_HOME/memory",
    "memory.max_prompt_tokens": "how much memory goes into the system prompt",
    "scheduler": "Scheduled jobs.",
    "scheduler.misfire_grace_seconds": "a job missed while down still runs if at most this late",
    "background": "Work released from a turn with background: true.",
    "background.max_chain": "background links one chain may hold: a report turn releases "
    "more only below this",
    "sandbox": "Where sandbox_exec and opencode run commands.",
    "sandbox.backend": "bwrap, docker, or none (disables sandbox_exec)",
    "sandbox.timeout_seconds": "wall clock limit of one command",
    "sandbox.memory_mb": "memory limit of one command",
    "sandbox.network": "let sandboxed commands reach the network",
    "sandbox.image": "image for the docker backend",
    "code_mode": "One execute_code tool instead of the individual tools.",
    "code_mode.enabled": "turn code mode on",
    "code_mode.timeout_seconds": "seconds of the snippet's own computation",
    "code_mode.max_tool_calls": "tool calls one snippet may make",
    "skills": "Skills and the hub.",
    "skills.path": "folder; unset = $AUGURE_HOME/skills",
    "skills.hub_url": "https://, http:// or file:// base URL serving manifest.json",
    "skills.hubs": "more hubs: manifest URLs or github:OWNER/REPO[/PATH][@REF]",
    "skills.max_failures": "consecutive failures before a skill is paused",
    "tools": "Which tools exist, and their settings in [tools.NAME].",
    "tools.enabled": "glob patterns over tool names",
    "tools.disabled": "glob patterns over tool names, applied after enabled",
    "tools.web_search": "web_search: Tavily (TAVILY_API_KEY), Exa (EXA_API_KEY) or SearXNG.",
    "tools.web_search.provider": "tavily, exa or searxng",
    "tools.web_search.api_key": "prefer TAVILY_API_KEY or EXA_API_KEY in the environment",
    "tools.web_search.base_url": "SearXNG root, or another API root",
    "tools.web_search.max_results": "results per search",
    "tools.web_search.timeout_seconds": "seconds to wait for the provider",
    "tools.http": "http: requests to web APIs (all but GET ask first).",
    "tools.http.timeout_seconds": "seconds per request",
    "tools.http.max_response_bytes": "longer bodies are cut",
    "tools.http.allow_private_networks": "allow loopback and private addresses (SSRF risk)",
    "tools.http.presets": "named bases: [tools.http.presets.NAME] base_url, headers",
    "tools.http.presets.*.base_url": "absolute http(s) URL",
    "tools.http.presets.*.headers": "values may name secrets as ${ENV_VAR}",
    "tools.email": "email: IMAP and SMTP (send asks first).",
    "tools.email.imap_host": "IMAP server",
    "tools.email.imap_port": "default 993 for ssl, 143 otherwise",
    "tools.email.imap_security": "ssl, starttls or none",
    "tools.email.smtp_host": "SMTP server",
    "tools.email.smtp_port": "default 465 for ssl, 587 for starttls, 25 for none",
    "tools.email.smtp_security": "ssl, starttls or none",
    "tools.email.username": "login (env EMAIL_USERNAME)",
    "tools.email.password": "prefer EMAIL_PASSWORD in the environment",
    "tools.email.from_address": "sender; unset = the username",
    "tools.calendar": "calendar: events over CalDAV (create, update, delete ask first).",
    "tools.calendar.url": "the CalDAV address (docs/calendar.md has each provider's)",
    "tools.calendar.username": "login",
    "tools.calendar.password": "an app password where the provider has them",
    "tools.calendar.default_calendar": "calendar name; unset = the first",
    "tools.github": "github: issues, pull requests, releases, search.",
    "tools.github.token": "prefer GITHUB_TOKEN in the environment",
    "tools.github.base_url": "API root (GitHub Enterprise: https://HOST/api/v3)",
    "tools.browser": "browser: headless Chromium.",
    "tools.browser.executable_path": "default: chromium, else chromium-headless-shell, on PATH",
    "tools.browser.headless": "false shows the window (needs a display)",
    "guests": "What a guest's chat (or a group) may reach of the owner's "
    "(docs/security.md#guests).",
    "guests.tools": "globs of the owner's tools offered there too, e.g. ['github']; [] = none",
    "guests.memory": "true: the owner's memory files in their prompt, and the memory tools",
    "recall": "The archive of past messages `recall` searches; vectors are optional.",
    "recall.embeddings_model": "e.g. text-embedding-3-small: also rank by /embeddings vectors; "
    "unset = full-text only, no embedding request",
    "recall.embeddings_batch": "texts sent in one /embeddings request",
    "recall.embeddings_price_per_million": "USD per million tokens embedded; 0 = unknown "
    "(no embedding under a [budget] cap)",
    "heartbeat": "A proactive turn over your checklist at intervals (off by default).",
    "heartbeat.enabled": "true starts the heartbeat with `augure run`",
    "heartbeat.interval_minutes": "minutes between two beats",
    "heartbeat.active_hours": "HH:MM-HH:MM in the agent timezone; may wrap past midnight",
    "heartbeat.checklist": "file under the memory folder; empty or missing = no model call",
    "dashboard": "The local web dashboard (pip install 'augure[dashboard]').",
    "dashboard.enabled": "true serves it from `augure run` too",
    "dashboard.host": "address to bind; loopback unless allow_remote",
    "dashboard.port": "TCP port; 0 picks a free one (the printed URL says which)",
    "dashboard.allow_remote": "true allows a non-loopback host (use TLS in front)",
    "voice": "Spoken replies: speech from the endpoint's /audio/speech, sent as voice notes.",
    "voice.replies": "off; voice_in: a voice note is answered by voice too; always",
    "voice.tts_model": "the endpoint's text-to-speech model",
    "voice.voice": "the voice it speaks with (alloy, echo, nova...)",
    "voice.price_per_million_characters": "USD, to count speech in the spend; 0 = not counted",
    "profiles": "A tool profile (docs/reference/limits.md): limits on the tools some callers use.",
    "profiles.*.origins": "callers it binds (any link of a call's chain, e.g. chat>background): "
    "chat, code, batch, job, skill, background, task:AGENT, heartbeat, dashboard, cli; * = all",
    "profiles.*.tools": 'Limits on the tools matching a glob: [profiles.NAME.tools."GLOB"].',
    "profiles.*.tools.*.per_minute": "calls in any 60 seconds; unset = no limit",
    "profiles.*.tools.*.per_day": "calls a day (agent timezone); unset = no limit",
    "profiles.*.tools.*.cost_per_call": "USD counted for each call",
    "profiles.*.tools.*.max_cost_per_day": "USD a day; unset = no limit",
    "profiles.*.tools.*.requires_approval": "true: every matching call asks the owner",
    "tools.opencode": "opencode: a coding agent run in the sandbox workspace.",
    "tools.opencode.command": "program (and arguments), e.g. opencode",
    "tools.opencode.args": "arguments before the task, e.g. ['run']",
    "mcp": "MCP servers whose tools the assistant may call (pip install 'augure[mcp]').",
    "mcp.startup_timeout_seconds": "seconds a turn waits, after start, for servers still starting",
    "mcp.servers": "one table per server: [mcp.servers.NAME], tools named mcp__NAME__TOOL",
    "mcp.servers.*.command": "program of a stdio server (set command or url)",
    "mcp.servers.*.args": "its arguments",
    "mcp.servers.*.env": "its environment; values may name secrets as ${ENV_VAR}",
    "mcp.servers.*.url": "endpoint of a streamable HTTP server",
    "mcp.servers.*.headers": "HTTP headers; values may name secrets as ${ENV_VAR}",
    "mcp.servers.*.enabled": "false: not started",
    "mcp.servers.*.deferred": "list the tools by name; schemas sent after load_tools",
    "mcp.servers.*.read_only_tools": "tools that only read; every other tool asks first",
    "mcp.servers.*.local_tools": "read-only tools that send their arguments nowhere: not "
    "checked after outside content (every other read-only tool is)",
    "mcp.servers.*.network_tools": "no longer needed (every read-only tool not in "
    "local_tools is checked); kept so older files load",
    "mcp.servers.*.timeout_seconds": "seconds per call and for the start",
    "agents": "Subagents the task tool runs, each in a fresh context: [agents.NAME].",
    "agents.default": "agent of a task call naming none; unset = the first one listed",
    "agents.*": "One subagent; its calls are gated and audited as origin task:NAME.",
    "agents.*.instructions": "its system prompt; the first sentence describes it to the model",
    "agents.*.model": "model name; unset = [llm] model",
    "agents.*.tools": "glob patterns over the tools it may call, e.g. ['web_*']; [] = none",
    "agents.*.max_loops": "model calls before it stops with [budget exhausted after N steps]",
    "agents.*.input_price_per_million": "USD, for its own model (not [llm]'s nor a "
    "fallback's); 0 = unknown: not called under a [budget] cap",
    "agents.*.output_price_per_million": "USD, for its own model; 0 = unknown",
    "agents.*.cached_input_price_per_million": "for cached prompt tokens; 0 = the input price",
}

# Values the owner may set in the file although they are secrets: written as a reminder only.
NOT_SET = "(not set)"


def _toml_value(value: Any) -> str | None:
    """The TOML spelling of a default, or None when TOML has none (unset)."""
    if value is None or isinstance(value, SecretStr):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str | Path):
        return json.dumps(str(value))
    if isinstance(value, list):
        items = [_toml_value(item) for item in value]
        return "[" + ", ".join(item for item in items if item is not None) + "]"
    if isinstance(value, dict):
        return "{}" if not value else None
    return None


def _placeholder(annotation: Any) -> str:
    """An empty value of the key's type for a key with no default: once uncommented, the line
    is still TOML and the owner only fills the value in."""
    kinds = [kind for kind in typing.get_args(annotation) if kind is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and kinds:
        annotation = kinds[0]  # `int | None`: the type of a set value
    origin = typing.get_origin(annotation) or annotation
    if origin is typing.Literal:
        return json.dumps(typing.get_args(annotation)[0])
    empty = {bool: "false", int: "0", float: "0.0", list: "[]", dict: "{}"}
    return next((text for kind, text in empty.items() if origin is kind), '""')


def _sub_model(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    return (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )


def _dict_of_models(field: FieldInfo) -> type[BaseModel] | None:
    if typing.get_origin(field.annotation) is not dict:
        return None
    value = typing.get_args(field.annotation)[1]
    return value if isinstance(value, type) and issubclass(value, BaseModel) else None


def keys(model: type[BaseModel], path: str) -> list[tuple[str, FieldInfo]]:
    """(dotted path, field) of every key under `path`, tables included."""
    found: list[tuple[str, FieldInfo]] = []
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        found.append((f"{path}.{name}", field))
        if (sub := _sub_model(field)) is not None:
            found += keys(sub, f"{path}.{name}")
        elif (item := _dict_of_models(field)) is not None:
            found += keys(item, f"{path}.{name}.*")
    if (named := _named_tables(model)) is not None:  # [agents.NAME] beside [agents] default
        found += keys(named, f"{path}.*")
    return found


def _named_tables(model: type[BaseModel]) -> type[BaseModel] | None:
    named = getattr(model, "NAMED_TABLES", None)
    return named if isinstance(named, type) and issubclass(named, BaseModel) else None


def all_keys() -> list[str]:
    """Every section and key the template describes (for the tests)."""
    paths: list[str] = []
    for name, field in Config.model_fields.items():
        if field.exclude:
            continue
        paths.append(name)
        sub, item = _sub_model(field), _dict_of_models(field)
        if item is not None:  # a table of named tables, like [profiles.NAME]
            paths += [path for path, _ in keys(item, f"{name}.*")]
            continue
        assert sub is not None
        paths += [path for path, _ in keys(sub, name)]
    for name, model in declared(builtin_only=True).items():
        paths.append(f"tools.{name}")
        paths += [path for path, _ in keys(model, f"tools.{name}")]
    return paths


def render(answers: dict[str, Any] | None = None, env_file: str = "$AUGURE_HOME/.env") -> str:
    """The whole file; `answers` maps dotted keys (`llm.model`) to values written active."""
    given = dict(answers or {})
    out = [HEADER.format(env_file=env_file)]
    for name, field in Config.model_fields.items():
        sub = _sub_model(field)
        if not field.exclude and (item := _dict_of_models(field)) is not None:
            _table(out, item, f"{name}.NAME", given)
        if field.exclude or sub is None:
            continue
        _table(out, sub, name, given)
        if sub is ToolsConfig:
            for tool_name, model in declared(builtin_only=True).items():
                _table(out, model, f"tools.{tool_name}", given)
    return "\n".join(out).rstrip() + "\n"


PlainKey = tuple[str, str, FieldInfo]  # name, dotted key, field
Table = tuple[type[BaseModel], str]  # model, dotted path (`KEY.NAME` for a table of tables)


def split(model: type[BaseModel], path: str) -> tuple[list[PlainKey], list[Table]]:
    """A table's plain keys, and its sub-tables (a free-form table of tables, such as
    `[tools.http.presets.NAME]`, as an example table `KEY.NAME`)."""
    plain: list[PlainKey] = []
    tables: list[Table] = []
    for name, field in model.model_fields.items():
        key = f"{path}.{name}"
        if field.exclude:
            continue
        if (sub := _sub_model(field)) is not None:
            tables.append((sub, key))
        elif (item := _dict_of_models(field)) is not None:
            tables.append((item, f"{key}.NAME"))
        else:
            plain.append((name, key, field))
    if (named := _named_tables(model)) is not None:
        tables.append((named, f"{path}.NAME"))
    return plain, tables


def described_key(key: str) -> str:
    return DESCRIPTIONS[key.replace(".NAME.", ".*.")]


def described_as(path: str) -> str:
    """The DESCRIPTIONS key of a table: `profiles.NAME.tools.NAME` is `profiles.*.tools`;
    `agents.NAME` is `agents.*` where that has a line of its own."""
    own = path.replace(".NAME", ".*")
    return own if own in DESCRIPTIONS else path.removesuffix(".NAME").replace(".NAME.", ".*.")


def _table(out: list[str], model: type[BaseModel], path: str, given: dict[str, Any]) -> None:
    example = path.endswith(".NAME")
    described = DESCRIPTIONS[described_as(path)]
    out.append(f"# {described}")
    out.append(f"# [{path}]" if example else f"[{path}]")
    plain, tables = split(model, path)
    for name, key, field in plain:
        out.append(f"# {described_key(key)}")
        if key in given:
            out.append(f"{name} = {_toml_value(given[key])}")
            continue
        default = (
            None
            if field.is_required()
            else _toml_value(field.get_default(call_default_factory=True))
        )
        if default is None:
            out.append(f"# {name} = {_placeholder(field.annotation)}  # {NOT_SET}")
        else:
            out.append(f"# {name} = {default}")
    out.append("")
    for sub, key in tables:
        _table(out, sub, key, given)
