"""Rules, secret discovery and configuration awareness, without the network."""

from pathlib import Path

import pytest

from augure.approval.rules import matches, verdict
from augure.config.settings import load_config
from augure.host.secrets import Redactor, discover
from augure.store.audit import Rule
from augure.store.state import Store
from augure.tools.base import Egress, RunContext, tool
from augure.tools.registry import ToolRegistry


@pytest.mark.parametrize(
    ("pattern", "target", "expected"),
    [
        ("email:send:to=a@b.c", "email:send:to=a@b.c", True),
        ("email:send:to=a@b.c", "email:send:to=a@b.cc", False),
        ("http:POST:api.example.com/v1/*", "http:POST:api.example.com/v1/items", True),
        ("http:POST:api.example.com/v1/*", "http:POST:api.example.com/v2/items", False),
        ("http:POST:api.example.com/v1/*", "http:POST:api.example.com.evil/v1/x", False),
        ("sandbox_exec:argv=git status*", "sandbox_exec:argv=git status --short", True),
        ("sandbox_exec:argv=git status*", "sandbox_exec:argv=git push", False),
        ("memory_write:path=notes/?.md", "memory_write:path=notes/a.md", True),
        ("memory_write:path=notes/?.md", "memory_write:path=notes/ab.md", False),
        ("send:to=[a]", "send:to=a", False),  # brackets are literal, not a character class
        ("send:to=[a]", "send:to=[a]", True),
    ],
)
def test_rule_patterns(pattern: str, target: str, expected: bool) -> None:
    assert matches(pattern, target) is expected


def test_deny_wins_over_any_allow() -> None:
    rules = [
        Rule(1, "allow", "send:to=*", "owner", 0),
        Rule(2, "deny", "send:to=mallory", "owner", 0),
    ]
    assert verdict(rules, "send:to=mallory") == rules[1]
    assert verdict(rules, "send:to=alice") == rules[0]
    assert verdict(rules, None) is None
    assert verdict(rules[1:], "send:to=alice") is None


def test_secret_discovery_covers_keys_env_and_handles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "augure.toml").write_text(
        '[tools.web_search]\napi_key = "tvly-inline-secret"\n'
        '[tools.http.presets.crm]\nbase_url = "https://crm.example"\n'
        'headers = { Authorization = "Bearer ${CRM_TOKEN}" }\n'
    )
    monkeypatch.setenv("CRM_TOKEN", "crm-token-value")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_env_value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-value")
    secrets = discover(load_config(home=tmp_path))
    assert secrets["CRM_TOKEN"] == "crm-token-value"
    assert secrets["GITHUB_TOKEN"] == "ghp_env_value"
    assert secrets["OPENAI_API_KEY"] == "sk-openai-value"
    assert secrets["TOOLS_WEB_SEARCH_API_KEY"] == "tvly-inline-secret"
    redact = Redactor(secrets)
    assert redact("a crm-token-value b") == "a [REDACTED:CRM_TOKEN] b"
    assert redact.value({"h": ["x ghp_env_value"]}) == {"h": ["x [REDACTED:GITHUB_TOKEN]"]}


@tool(
    "needs_key",
    egress=Egress.READ_ONLY,
    check=lambda config: None if config.tools.section("needs_key") else "set [tools.needs_key]",
    hint="use it for keyed lookups",
)
async def needs_key(ctx: RunContext) -> str:
    """Look something up with a key."""
    return "ok"


async def test_unconfigured_tool_stays_visible_with_what_to_set(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    registry = ToolRegistry(load_config(home=tmp_path))
    registry.register(needs_key)
    (schema,) = registry.to_function_schemas()
    assert schema["function"]["description"] == (
        "Look something up with a key. [NOT CONFIGURED] set [tools.needs_key]"
    )
    assert registry.hints() == ["needs_key: use it for keyed lookups"]
    await store.close()
