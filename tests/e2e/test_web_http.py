"""`web_search` against a fake of each provider's real API, and both tools through the real bot."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from augure.config.settings import load_config
from augure.config.tools import ToolsConfig
from augure.memory.store import MemoryStore
from augure.store.state import Store
from augure.tools.base import RunContext, ToolResult
from augure.tools.http import http_tool
from augure.tools.registry import ToolRegistry
from augure.tools.web_search import web_search
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import is_answer, tool_results
from tests.fakes.openai import text, tool
from tests.fakes.search import FakeSearch, FakeUpstream

TAVILY_KEY = "tvly-e2e-0a1b2c3d"
EXA_KEY = "exa-e2e-9f8e7d6c"
SEARXNG_KEY = "sx-e2e-5566aa"
LAB_TOKEN = "lab-secret-7c1d2e9f"
PROVIDERS = ("tavily", "exa", "searxng")


pytestmark = pytest.mark.tools(web_search, http_tool)


@pytest.fixture
async def search() -> AsyncIterator[FakeSearch]:
    async with FakeSearch(TAVILY_KEY, EXA_KEY, SEARXNG_KEY) as fake:
        yield fake


@pytest.fixture
async def upstream() -> AsyncIterator[FakeUpstream]:
    async with FakeUpstream() as server:
        yield server


@pytest.fixture(autouse=True)
def no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TAVILY_API_KEY", "EXA_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def table(search: FakeSearch, provider: str, **extra: Any) -> dict[str, Any]:
    keys = {"tavily": TAVILY_KEY, "exa": EXA_KEY, "searxng": SEARXNG_KEY}
    return {
        "provider": provider,
        "api_key": keys[provider],
        "base_url": search.base_url(provider),
        **extra,
    }


async def run_search(tmp_path: Path, section: dict[str, Any], **args: Any) -> ToolResult:
    config = load_config(home=tmp_path)
    config.tools = ToolsConfig.model_validate({"web_search": section})
    store = await Store.open(tmp_path / "state.db")
    try:
        ctx = RunContext(config, MemoryStore(tmp_path / "memory"), store)
        return await web_search.run_ungated(args, ctx)
    finally:
        await store.close()


# -- providers ----------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_each_provider_gives_compact_numbered_results(
    tmp_path: Path, search: FakeSearch, provider: str
) -> None:
    three = await run_search(tmp_path, table(search, provider), query="solar ovens", max_results=3)
    assert three.success, three.output
    blocks = three.output.split("\n")
    assert blocks[:2] == ["1. solar ovens — result 1", "   https://site1.example/solar-ovens"]
    assert blocks[2].startswith("   About solar ovens, number 1. Lorem ipsum")
    assert blocks[2].endswith("…") and len(blocks[2]) <= 3 + 301
    assert len(blocks) == 9 and blocks[-3] == "3. solar ovens — result 3"

    default = await run_search(tmp_path, table(search, provider), query="tea")
    assert default.output.count("\n   https://") == 5 and "\n5. tea — result 5" in default.output
    configured = await run_search(tmp_path, table(search, provider, max_results=2), query="tea")
    assert configured.output.count("\n   https://") == 2

    seen = search.requests[0]
    assert seen.provider == provider
    if provider == "tavily":  # the real tavily-python client made this request
        assert seen.headers["Authorization"] == f"Bearer {TAVILY_KEY}"
        assert seen.payload["query"] == "solar ovens" and seen.payload["max_results"] == 3
        assert seen.headers["X-Client-Source"] == "tavily-python"
    elif provider == "exa":
        assert seen.headers["x-api-key"] == EXA_KEY
        assert seen.payload["numResults"] == 3 and "highlights" in seen.payload["contents"]
    else:
        assert seen.payload == {"q": "solar ovens", "format": "json"}
        assert seen.headers["Authorization"] == f"Bearer {SEARXNG_KEY}"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_bad_key_server_error_and_timeout_are_clear_error_results(
    tmp_path: Path, search: FakeSearch, provider: str
) -> None:
    wrong = await run_search(tmp_path, {**table(search, provider), "api_key": "nope"}, query="q")
    assert not wrong.success and "refused the API key (401)" in wrong.output
    assert "nope" not in wrong.output

    search.fail_status = 502
    broken = await run_search(tmp_path, table(search, provider), query="q")
    assert not broken.success and "answered HTTP 502" in broken.output

    search.fail_status, search.delay = None, 3.0
    started = time.monotonic()
    slow = await run_search(tmp_path, table(search, provider, timeout_seconds=0.5), query="q")
    assert time.monotonic() - started < 2.5
    assert not slow.success and "did not answer within 0.5 s" in slow.output


async def test_keys_come_from_the_environment_when_not_in_config(
    tmp_path: Path, search: FakeSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    for provider, variable, key in (
        ("tavily", "TAVILY_API_KEY", TAVILY_KEY),
        ("exa", "EXA_API_KEY", EXA_KEY),
    ):
        section = {"provider": provider, "base_url": search.base_url(provider)}
        missing = await run_search(tmp_path, section, query="q")
        assert missing.output == (
            f"Error: web_search is not configured: set {variable} (or [tools.web_search] api_key)"
        )
        monkeypatch.setenv(variable, key)
        found = await run_search(tmp_path, section, query="q")
        assert found.success and found.output.startswith("1. q — result 1")


def test_missing_key_or_url_is_shown_in_the_schema(tmp_path: Path) -> None:
    expected = {
        "tavily": "set TAVILY_API_KEY (or [tools.web_search] api_key)",
        "exa": "set EXA_API_KEY (or [tools.web_search] api_key)",
        "searxng": "set [tools.web_search] base_url to your SearXNG instance (JSON format on)",
    }
    for provider, hint in expected.items():
        config = load_config(home=tmp_path)
        config.tools = ToolsConfig.model_validate({"web_search": {"provider": provider}})
        registry = ToolRegistry(config)
        registry.register(web_search)
        (schema,) = registry.to_function_schemas()
        assert schema["function"]["description"].endswith(f" [NOT CONFIGURED] {hint}")
    config.tools = ToolsConfig.model_validate({"web_search": {"provider": "bing"}})
    assert (web_search.config_check(config) or "").startswith("fix [tools.web_search]: provider")


# -- through the real bot -----------------------------------------------------------------


async def restart_with(bot: Bot, env: dict[str, str], toml: str = "") -> None:
    await bot.stop()
    bot.extra_env = env
    if toml:
        bot.home.mkdir(parents=True, exist_ok=True)
        (bot.home / "augure.toml").write_text(toml, encoding="utf-8")
    await bot.start()


async def reply(bot: Bot, expected: str) -> None:
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and is_answer(c.params.get("text"), expected),
        timeout=10,
    )


async def test_web_search_through_the_bot_is_labelled_and_asks_nothing(
    bot: Bot, search: FakeSearch
) -> None:
    await restart_with(
        bot,
        {
            "TAVILY_API_KEY": TAVILY_KEY,
            "AUGURE__TOOLS__WEB_SEARCH__BASE_URL": search.base_url("tavily"),
        },
    )
    bot.llm.script(tool("web_search", {"query": "augure", "max_results": 2}), text("Found two."))
    bot.telegram.inject_message(OWNER, "search augure")
    await reply(bot, "Found two.")
    (result,) = tool_results(bot.llm)
    assert result.startswith('<untrusted_content source="web_search">\n1. augure — result 1\n')
    assert "\n2. augure — result 2\n" in result and "\n3. " not in result
    assert not [c for c in bot.telegram.sent("sendMessage") if "reply_markup" in c.params]
    assert TAVILY_KEY not in json.dumps(bot.llm.requests)


async def test_unconfigured_web_search_says_so_in_what_the_model_sees(bot: Bot) -> None:
    bot.llm.script(text("hello"))
    bot.telegram.inject_message(OWNER, "hi")
    await reply(bot, "hello")
    (schema,) = [t for t in bot.llm.requests[0]["tools"] if t["function"]["name"] == "web_search"]
    assert schema["function"]["description"].endswith(
        "[NOT CONFIGURED] set TAVILY_API_KEY (or [tools.web_search] api_key)"
    )


def lab_toml(upstream: FakeUpstream) -> str:
    return (
        "[tools.http]\n"
        "allow_private_networks = true\n"
        "[tools.http.presets.lab]\n"
        f'base_url = "{upstream.root}/api/v2"\n'
        'headers = { Authorization = "Bearer ${LAB_TOKEN}" }\n'
    )


async def test_get_with_a_secret_preset_runs_at_once_and_the_secret_stays_home(
    bot: Bot, upstream: FakeUpstream
) -> None:
    await restart_with(bot, {"LAB_TOKEN": LAB_TOKEN}, lab_toml(upstream))
    bot.llm.script(
        tool("http", {"method": "GET", "url": "whoami/echo", "preset": "lab"}),
        text("You are authenticated."),
    )
    bot.telegram.inject_message(OWNER, "who am I on the lab API?")
    await reply(bot, "You are authenticated.")

    (method, path, headers, _) = upstream.requests[0]
    assert (method, path, headers["Authorization"]) == (
        "GET",
        "/api/v2/whoami/echo",
        f"Bearer {LAB_TOKEN}",
    )
    (result,) = tool_results(bot.llm)
    assert result.startswith('<untrusted_content source="http">\nHTTP 200 OK\n')
    assert '"Authorization": "Bearer [REDACTED:LAB_TOKEN]"' in result  # the server echoed it
    assert LAB_TOKEN not in json.dumps(bot.llm.requests)
    assert LAB_TOKEN not in json.dumps(bot.telegram.messages(OWNER))
    assert not [c for c in bot.telegram.sent("sendMessage") if "reply_markup" in c.params]
    assert bot.core is not None
    (record,) = await bot.core.audit.listing(tool="http")
    assert LAB_TOKEN not in json.dumps(record) and record["approval_status"] == "not_required"


async def test_post_waits_for_approve_and_a_refused_private_get_never_leaves(
    bot: Bot, upstream: FakeUpstream
) -> None:
    await restart_with(bot, {"LAB_TOKEN": LAB_TOKEN}, lab_toml(upstream))
    post = {"method": "POST", "url": "notes/echo", "preset": "lab", "body": {"text": "buy milk"}}
    bot.llm.script(tool("http", post), text("Saved the note."))
    bot.telegram.inject_message(OWNER, "save a note")
    calls = await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and "reply_markup" in c.params
    )
    sent_id = calls[0].response["result"]["message_id"]
    (message,) = [m for m in bot.telegram.messages(OWNER) if m["message_id"] == sent_id]
    assert "http" in message["text"] and "notes/echo" in message["text"]
    rows = message["reply_markup"]["inline_keyboard"]
    buttons = {b["text"]: b["callback_data"] for row in rows for b in row}
    assert set(buttons) == {"Approve", "Reject", "Always allow", "Allow in this chat"}
    assert upstream.requests == []  # nothing is sent before the press

    bot.telegram.press_button(OWNER, message["message_id"], buttons["Approve"])
    await reply(bot, "Saved the note.")
    (method, path, _, body) = upstream.requests[0]
    assert (method, path, json.loads(body)) == ("POST", "/api/v2/notes/echo", {"text": "buy milk"})
    (result,) = tool_results(bot.llm)
    assert result.startswith('<untrusted_content source="http">\nHTTP 200 OK')

    # Without allow_private_networks the same loopback server is out of reach.
    await restart_with(bot, {}, "[tools.http]\n")
    bot.llm.script(tool("http", {"method": "GET", "url": f"{upstream.root}/x"}), text("No."))
    # Named by the owner: the page read earlier in this conversation does not make it ask.
    bot.telegram.inject_message(OWNER, f"fetch {upstream.root}/x")
    await reply(bot, "No.")
    assert "which is loopback" in tool_results(bot.llm)[-1]
    assert len(upstream.requests) == 1


async def test_always_allow_saves_a_rule_for_the_first_path_segment_only(
    bot: Bot, upstream: FakeUpstream
) -> None:
    await restart_with(bot, {}, "[tools.http]\nallow_private_networks = true\n")
    host = upstream.root.removeprefix("http://")

    def post(path: str) -> dict[str, Any]:
        return {"method": "POST", "url": f"{upstream.root}{path}", "body": "x"}

    bot.llm.script(tool("http", post("/v1/notes/echo")), text("First."))
    bot.telegram.inject_message(OWNER, "post one")
    calls = await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and "reply_markup" in c.params
    )
    sent_id = calls[0].response["result"]["message_id"]
    (message,) = [m for m in bot.telegram.messages(OWNER) if m["message_id"] == sent_id]
    rows = message["reply_markup"]["inline_keyboard"]
    buttons = {b["text"]: b["callback_data"] for row in rows for b in row}
    bot.telegram.press_button(OWNER, sent_id, buttons["Always allow"])
    await reply(bot, "First.")
    assert bot.core is not None
    assert [r.pattern for r in await bot.core.audit.rules()] == [f"http:POST:{host}/v1/*"]

    bot.llm.script(tool("http", post("/v1/other")), text("Second."))
    bot.telegram.inject_message(OWNER, "post two")
    await reply(bot, "Second.")  # covered by the rule: no question asked
    assert [p for m, p, _, _ in upstream.requests if m == "POST"] == [
        "/v1/notes/echo",
        "/v1/other",
    ]

    bot.llm.script(tool("http", post("/v2/admin")), text("Third."))
    bot.telegram.inject_message(OWNER, "post three")
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and "reply_markup" in c.params, count=2
    )
    assert "/v2/admin" not in upstream.paths()  # a neighbour path still asks
