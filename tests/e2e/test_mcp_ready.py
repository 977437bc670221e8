"""MCP tools ready for the first message, and a server that is down named with its reason:
the real bot (Telegram fake, scripted model) and the `augure` command, with the real SDK
server of tests/fakes/mcp_server.py, started late or not at all."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import augure, environment, final_reply, is_answer, tool_results
from tests.e2e.test_mcp import ROOT, server_table
from tests.fakes.openai import text, tool

pytest.importorskip("mcp", reason="the mcp extra (pip install 'augure[mcp]') is not installed")

# Long enough that a turn which does not wait starts before the server has listed its tools.
SLOW_START_SECONDS = 2


def slow(name: str, **keys: Any) -> str:
    """The fake server, started only after SLOW_START_SECONDS."""
    serve = shlex.join([sys.executable, "-m", "tests.fakes.mcp_server", "stdio"])
    return server_table(
        name,
        command="/bin/sh",
        args=["-c", f"sleep {SLOW_START_SECONDS}; exec {serve}"],
        env={"PYTHONPATH": str(ROOT)},
        read_only_tools=["lookup"],
        **keys,
    )


def failing(name: str) -> str:
    """A server that says why on stderr and exits with code 1 at once (a missing token)."""
    script = "import sys; print('DICT_TOKEN is not set', file=sys.stderr); sys.exit(1)"
    return server_table(name, command=sys.executable, args=["-c", script])


def hung(name: str) -> str:
    """A server that never answers its first request: its start fails after 30 s."""
    sleep = ["-c", "import time; time.sleep(600)"]
    return server_table(name, command=sys.executable, args=sleep, timeout_seconds=30)


def home_with(tmp_path: Path, servers: str, startup_timeout: float | None = None) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    table = (
        "" if startup_timeout is None else f"[mcp]\nstartup_timeout_seconds = {startup_timeout}\n"
    )
    (home / "augure.toml").write_text(table + servers, encoding="utf-8")
    return home


def offered(request: dict[str, Any]) -> list[str]:
    return [schema["function"]["name"] for schema in request.get("tools") or []]


async def test_the_first_message_after_start_can_use_a_server_still_starting(
    tmp_path: Path, telegram: Any, llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = Bot(home_with(tmp_path, slow("dict")), telegram, llm, monkeypatch)
    await bot.start()
    try:
        # At once: the server is still asleep, its tools not yet listed.
        llm.script(tool("mcp__dict__lookup", {"word": "kiwi"}), text("Looked up."))
        telegram.inject_message(OWNER, "look up kiwi")
        await telegram.wait_for(
            lambda c: c.method == "sendMessage" and is_answer(c.params.get("text"), "Looked up."),
            timeout=30,
        )
        assert "mcp__dict__lookup" in offered(llm.requests[0])
        (result,) = tool_results(llm)
        assert "kiwi: a word of 4 letters" in result
    finally:
        await bot.stop()


async def test_a_server_that_fails_fast_does_not_delay_the_first_turn(
    tmp_path: Path, telegram: Any, llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wait for the server to be *ready* would hold this turn for the whole 30 s.
    home = home_with(tmp_path, failing("dict"), startup_timeout=30)
    bot = Bot(home, telegram, llm, monkeypatch)
    await bot.start()
    try:
        llm.script(text("Answered."))
        telegram.inject_message(OWNER, "hi")
        await final_reply(bot, "Answered.")  # 10 s at most
    finally:
        await bot.stop()


async def test_a_server_slower_than_the_startup_timeout_delays_the_first_turn_only_that_long(
    tmp_path: Path, telegram: Any, llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its start fails only after its timeout_seconds (30): the turn must not wait for that.
    bot = Bot(home_with(tmp_path, hung("stuck"), startup_timeout=1), telegram, llm, monkeypatch)
    await bot.start()
    try:
        llm.script(text("Answered."))
        telegram.inject_message(OWNER, "hi")
        await final_reply(bot, "Answered.")  # 10 s at most
        assert bot.core is not None and bot.core.mcp is not None
        assert bot.core.mcp.servers["stuck"].state == "starting"
    finally:
        await bot.stop()


async def test_a_call_to_a_server_that_never_started_names_it_and_why(
    tmp_path: Path, telegram: Any, llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = failing("dict") + server_table("off", command="/bin/true", enabled=False)
    bot = Bot(home_with(tmp_path, servers), telegram, llm, monkeypatch)
    await bot.start()
    try:
        assert bot.core is not None and bot.core.mcp is not None
        dictionary = bot.core.mcp.servers["dict"]
        await asyncio.wait_for(dictionary.wait_settled(), 30)
        assert dictionary.state == "down"
        llm.script(
            tool("mcp__dict__lookup", {"word": "kiwi"}),
            tool("mcp__off__lookup", {}),
            tool("mcp__nosuch__lookup", {}),
            text("Tried."),
        )
        telegram.inject_message(OWNER, "look up kiwi")
        await final_reply(bot, "Tried.")
        down, disabled, unknown = tool_results(llm)
        assert "unknown tool" not in down
        assert "MCP server dict is down: it exited with code 1" in down
        assert "(see logs/mcp/dict.log); retrying" in down
        assert "unknown tool" not in disabled
        assert "MCP server off is disabled" in disabled
        # A name that matches no configured server is still unknown.
        assert "unknown tool 'mcp__nosuch__lookup'" in unknown
        log = (bot.home / "logs" / "mcp" / "dict.log").read_text(encoding="utf-8")
        assert "DICT_TOKEN is not set" in log
    finally:
        await bot.stop()


async def test_tools_list_and_run_include_the_tools_of_a_server_still_starting(
    tmp_path: Path,
) -> None:
    env = environment(home_with(tmp_path, slow("dict")))
    code, out, err = await augure("tools", "list", "--json", env=env, timeout=60)
    assert code == 0, err
    egress = {listed["name"]: listed["egress"] for listed in json.loads(out)}
    assert egress["mcp__dict__lookup"] == "read_only"
    assert egress["mcp__dict__write_note"] == "write"

    code, out, err = await augure("tools", "list", env=env, timeout=60)
    assert code == 0, err
    assert "mcp__dict__lookup" in out

    arguments = json.dumps({"word": "fig"})
    code, out, err = await augure(
        "tools", "run", "mcp__dict__lookup", "--args", arguments, env=env, timeout=60
    )
    assert code == 0, err
    assert "fig: a word of 3 letters" in out


async def test_tools_run_of_a_server_that_never_started_names_it_and_why(tmp_path: Path) -> None:
    env = environment(home_with(tmp_path, failing("dict")))
    code, out, err = await augure("tools", "run", "mcp__dict__lookup", env=env, timeout=60)
    assert code == 1
    assert "unknown tool" not in out + err
    assert "MCP server dict is down: it exited with code 1" in out


async def test_the_reason_a_server_is_down_is_redacted_when_it_quotes_a_secret(
    tmp_path: Path, telegram: Any, llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaky = "literal-secret-9012"
    servers = server_table(
        "vault", url="http://127.0.0.1:9/mcp", headers={"X-Key": leaky}, enabled=False
    ) + server_table("dict", command=f"/nonexistent/{leaky}")
    bot = Bot(home_with(tmp_path, servers), telegram, llm, monkeypatch)
    await bot.start()
    try:
        llm.script(tool("mcp__dict__lookup", {"word": "kiwi"}), text("Tried."))
        telegram.inject_message(OWNER, "look up kiwi")
        await final_reply(bot, "Tried.")
        (down,) = tool_results(llm)
        assert "MCP server dict is down: " in down
        assert leaky not in down and "[REDACTED:MCP_VAULT_HEADERS_X_KEY]" in down
    finally:
        await bot.stop()
