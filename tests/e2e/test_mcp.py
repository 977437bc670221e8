"""MCP servers through the real bot: a real SDK server process (stdio and streamable HTTP),
the Telegram fake and the scripted model; calls go through the same door as built-in tools."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from augure.cli import doctor
from augure.config.settings import ConfigError, load_config
from augure.host.secrets import Redactor
from augure.mcp.client import McpServer
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import (
    approval_message,
    augure,
    buttons,
    environment,
    final_reply,
    tool_results,
)
from tests.fakes.openai import text, tool

pytest.importorskip("mcp", reason="the mcp extra (pip install 'augure[mcp]') is not installed")

SECRET = "mcp-secret-value-1234"
ROOT = Path(__file__).parents[2]


def toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def server_table(name: str, **keys: Any) -> str:
    lines = [f"[mcp.servers.{name}]"]
    lines += [f"{key} = {toml(value)}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"


def stdio(name: str, **keys: Any) -> str:
    return server_table(
        name,
        command=sys.executable,
        args=["-m", "tests.fakes.mcp_server", "stdio"],
        env={"MCP_NOTES": "${MCP_NOTES}", "MCP_SECRET": "${MCP_SECRET}", "PYTHONPATH": str(ROOT)},
        **keys,
    )


@pytest.fixture
def servers() -> str:
    # Its read-only tools send nothing anywhere: the owner says so, and they are not checked
    # after outside content (a crash's error is outside content too).
    tools = ["lookup", "leak", "pid"]
    return stdio("fake", read_only_tools=tools, local_tools=tools)


@pytest.fixture
def bot_env(tmp_path: Path, servers: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "augure.toml").write_text(servers, encoding="utf-8")
    monkeypatch.setenv("MCP_NOTES", str(tmp_path / "notes.txt"))
    monkeypatch.setenv("MCP_SECRET", SECRET)
    return {}


def notes(bot: Bot) -> list[str]:
    path = bot.home.parent / "notes.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


async def ready(bot: Bot, name: str = "fake") -> McpServer:
    assert bot.core is not None and bot.core.mcp is not None
    server = bot.core.mcp.servers[name]
    await asyncio.wait_for(server.wait_ready(), 30)
    return server


async def ask(bot: Bot, call: str, arguments: dict[str, Any], answer: str) -> None:
    bot.llm.script(tool(call, arguments), text(answer))
    bot.telegram.inject_message(OWNER, f"please {call}")


async def test_a_read_only_tool_runs_without_asking_and_its_output_is_untrusted(bot: Bot) -> None:
    await ready(bot)
    await ask(bot, "mcp__fake__lookup", {"word": "kiwi"}, "Looked up.")
    await final_reply(bot, "Looked up.")
    (result,) = tool_results(bot.llm)
    assert '<untrusted_content source="mcp__fake__lookup">' in result
    assert "kiwi: a word of 4 letters" in result
    schemas = {s["function"]["name"]: s["function"] for s in bot.llm.requests[0]["tools"]}
    lookup = schemas["mcp__fake__lookup"]
    assert lookup["description"] == "Look a word up in the fake dictionary."
    assert lookup["parameters"]["properties"]["word"]["type"] == "string"
    assert not [m for m in bot.telegram.messages(OWNER) if m.get("reply_markup")]


async def test_a_write_tool_asks_and_runs_only_after_approve(bot: Bot) -> None:
    await ready(bot)
    await ask(bot, "mcp__fake__write_note", {"text": "buy milk"}, "Noted.")
    message = await approval_message(bot)
    assert "mcp__fake__write_note" in message["text"]
    assert notes(bot) == []  # nothing runs before the press
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Noted.")
    assert notes(bot) == ["buy milk"]
    assert "noted: buy milk" in tool_results(bot.llm)[0]


async def test_always_allow_for_one_mcp_tool_does_not_cover_another(bot: Bot) -> None:
    await ready(bot)
    await ask(bot, "mcp__fake__write_note", {"text": "one"}, "Noted once.")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Always allow"])
    await final_reply(bot, "Noted once.")
    assert bot.core is not None
    assert [r.pattern for r in await bot.core.audit.rules()] == ["mcp.fake.write_note"]

    await ask(bot, "mcp__fake__write_note", {"text": "two"}, "Noted twice.")
    await final_reply(bot, "Noted twice.")  # the rule covers it: no second request
    assert notes(bot) == ["one", "two"]

    await ask(bot, "mcp__fake__fail", {}, "Tried.")
    other = await approval_message(bot, count=2)  # another tool of the server still asks
    assert "mcp__fake__fail" in other["text"]
    bot.telegram.press_button(OWNER, other["message_id"], buttons(other)["Reject"])
    await final_reply(bot, "Tried.")


async def test_an_image_from_a_server_reaches_the_chat_as_a_photo(bot: Bot) -> None:
    await ready(bot)
    await ask(bot, "mcp__fake__chart", {}, "Here is the chart.")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Here is the chart.")
    (photo,) = await bot.telegram.wait_for("sendPhoto")
    assert photo.params.get("caption") == "mcp__fake__chart-0.png"


async def test_secrets_in_an_mcp_result_are_redacted(bot: Bot) -> None:
    await ready(bot)
    await ask(bot, "mcp__fake__leak", {}, "Leaked?")
    await final_reply(bot, "Leaked?")
    (result,) = tool_results(bot.llm)
    assert SECRET not in result and "[REDACTED:MCP_SECRET]" in result


async def test_a_server_that_crashes_is_reported_and_comes_back(bot: Bot) -> None:
    server = await ready(bot)
    await ask(bot, "mcp__fake__crash", {}, "Crashed.")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Crashed.")
    (result,) = tool_results(bot.llm)
    assert "MCP server fake" in result and "restarted" in result

    await ask(bot, "mcp__fake__lookup", {"word": "x"}, "While down.")
    await final_reply(bot, "While down.")
    down = tool_results(bot.llm)[-1]
    assert "MCP server fake" in down  # down (or checking): the call says so, the bot answers

    bot.telegram.inject_message(OWNER, "/status")
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and "MCP: fake" in str(c.params.get("text"))
    )
    await asyncio.wait_for(server.wait_ready(), 30)
    await ask(bot, "mcp__fake__lookup", {"word": "back"}, "Back.")
    await final_reply(bot, "Back.")
    assert "back: a word of 4 letters" in tool_results(bot.llm)[-1]


@pytest.fixture
def bad_servers() -> str:
    return server_table("broken", command="/nonexistent/mcp-server") + stdio("fake")


async def test_a_server_with_a_bad_command_leaves_the_bot_answering(
    tmp_path: Path,
    telegram: Any,
    llm: Any,
    monkeypatch: pytest.MonkeyPatch,
    bad_servers: str,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "augure.toml").write_text(bad_servers, encoding="utf-8")
    bot = Bot(home, telegram, llm, monkeypatch)
    await bot.start()
    try:
        llm.script(text("Still here."))
        telegram.inject_message(OWNER, "hello?")
        await final_reply(bot, "Still here.")
        assert bot.core is not None and bot.core.mcp is not None
        broken = bot.core.mcp.servers["broken"]
        while broken.state != "down":
            await asyncio.sleep(0.05)
        assert "mcp-server" in (broken.error or "") or "No such file" in (broken.error or "")
        telegram.inject_message(OWNER, "/status")
        await telegram.wait_for(
            lambda c: c.method == "sendMessage" and "broken down" in str(c.params.get("text"))
        )
    finally:
        await bot.stop()


async def test_no_server_process_outlives_the_bot(bot: Bot) -> None:
    await ready(bot)
    await ask(bot, "mcp__fake__pid", {}, "Pid.")
    await final_reply(bot, "Pid.")
    pid = int(tool_results(bot.llm)[0].split("\n")[1])
    assert psutil.pid_exists(pid)
    await bot.stop()
    process = psutil.Process(pid) if psutil.pid_exists(pid) else None
    assert process is None or process.status() == psutil.STATUS_ZOMBIE


@pytest.fixture
def port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free: int = probe.getsockname()[1]
    return free


@pytest.fixture
async def http_server(port: int) -> AsyncIterator[str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.fakes.mcp_server",
        "http",
        str(port),
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        while True:  # until the server listens
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                assert process.returncode is None, "the MCP server exited at start"
                await asyncio.sleep(0.05)
                continue
            writer.close()
            break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        await process.wait()


@pytest.fixture
def http_servers(http_server: str) -> str:
    return server_table(
        "web",
        url=http_server,
        headers={"Authorization": "Bearer ${MCP_SECRET}"},
        read_only_tools=["lookup"],
    )


async def test_a_streamable_http_server_serves_its_tools(
    tmp_path: Path,
    telegram: Any,
    llm: Any,
    monkeypatch: pytest.MonkeyPatch,
    http_servers: str,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "augure.toml").write_text(http_servers, encoding="utf-8")
    monkeypatch.setenv("MCP_SECRET", SECRET)
    bot = Bot(home, telegram, llm, monkeypatch)
    await bot.start()
    try:
        await ready(bot, "web")
        await ask(bot, "mcp__web__lookup", {"word": "fig"}, "Found.")
        await final_reply(bot, "Found.")
        assert "fig: a word of 3 letters" in tool_results(llm)[0]
    finally:
        await bot.stop()


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("[mcp.servers.x]\ncomand = 'y'\n", "mcp.servers.x.comand: unknown key; did you mean"),
        ("[mcp.servers.x]\ncommand = 'y'\nurl = 'http://h/mcp'\n", "set either command"),
        ("[mcp.servers.x]\nurl = 'http://h/mcp'\nenv = { A = 'b' }\n", "apply to a command"),
        ("[mcp.server.x]\ncommand = 'y'\n", "mcp.server: unknown key"),
        ("[mcp.servers.a__b]\ncommand = 'y'\n", "server name 'a__b'"),
    ],
)
def test_config_refuses_what_spec_9_does_not_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, expected: str
) -> None:
    for name in list(os.environ):
        if name.startswith("AUGURE"):
            monkeypatch.delenv(name)
    (tmp_path / "augure.toml").write_text(table, encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(home=tmp_path)


def test_mcp_header_and_env_secrets_are_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TOKEN_VALUE", "handle-secret-5678")
    (tmp_path / "augure.toml").write_text(
        server_table("a", url="http://h/mcp", headers={"Authorization": "${MCP_TOKEN_VALUE}"})
        + server_table("b", url="http://h/mcp", headers={"X-Key": "literal-secret-9012"}),
        encoding="utf-8",
    )
    redact = Redactor.from_config(load_config(home=tmp_path))
    line = redact("saw handle-secret-5678 and literal-secret-9012")
    assert line == "saw [REDACTED:MCP_TOKEN_VALUE] and [REDACTED:MCP_B_HEADERS_X_KEY]"


def cli_home(tmp_path: Path, servers: str) -> dict[str, str]:
    home = tmp_path / "cli-home"
    home.mkdir()
    (home / "augure.toml").write_text(servers, encoding="utf-8")
    return environment(home, {"MCP_SECRET": SECRET, "MCP_NOTES": str(tmp_path / "n.txt")})


async def test_mcp_list_shows_each_server_state_and_tools(tmp_path: Path) -> None:
    servers = (
        stdio("fake", read_only_tools=["lookup"], deferred=True)
        + server_table("broken", command="/nonexistent/mcp-server")
        + server_table("off", url="http://127.0.0.1:9/mcp", enabled=False)
    )
    env = cli_home(tmp_path, servers)
    code, out, err = await augure("mcp", "list", "--json", env=env, timeout=60)
    assert code == 0, err
    listed = {server["name"]: server for server in json.loads(out)}
    assert listed["fake"]["state"] == "ready" and listed["fake"]["deferred"] is True
    tools = {tool["name"]: tool["access"] for tool in listed["fake"]["tools"]}
    assert tools["mcp__fake__lookup"] == "read_only"
    assert tools["mcp__fake__write_note"] == "write"
    assert listed["broken"]["state"] == "down" and listed["broken"]["error"]
    assert listed["off"]["state"] == "disabled"

    code, out, err = await augure("mcp", "list", env=env, timeout=60)
    assert code == 0, err
    assert "fake: ready, stdio, deferred" in out
    assert "  mcp__fake__lookup [read_only]: Look a word up in the fake dictionary." in out
    assert "broken: down (" in out


async def test_doctor_lists_each_server_with_its_tool_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_SECRET", SECRET)
    monkeypatch.setenv("MCP_NOTES", str(tmp_path / "n.txt"))
    servers = stdio("fake") + server_table("broken", command="/nonexistent/mcp-server")
    config = load_config(home=_home_with(tmp_path, servers))
    checks = [check async for check in doctor._mcp(config)]
    lines = {check.name: check for check in checks}
    assert lines["mcp fake"].ok and lines["mcp fake"].detail == "ready, 7 tool(s)"
    assert not lines["mcp broken"].ok and lines["mcp broken"].detail.startswith("down (")


def _home_with(tmp_path: Path, servers: str) -> Path:
    home = tmp_path / "doctor-home"
    home.mkdir()
    (home / "augure.toml").write_text(servers, encoding="utf-8")
    return home


@pytest.fixture
def deferred_servers() -> str:
    return stdio("lazy", read_only_tools=["lookup"], deferred=True)


async def test_a_deferred_server_adds_no_schema_until_loaded(
    tmp_path: Path,
    telegram: Any,
    llm: Any,
    monkeypatch: pytest.MonkeyPatch,
    deferred_servers: str,
) -> None:
    home = _home_with(tmp_path, deferred_servers)
    monkeypatch.setenv("MCP_SECRET", SECRET)
    monkeypatch.setenv("MCP_NOTES", str(tmp_path / "n.txt"))
    bot = Bot(home, telegram, llm, monkeypatch)
    await bot.start()
    try:
        await ready(bot, "lazy")
        llm.script(
            tool("load_tools", {"names": ["mcp__lazy__lookup"]}),
            tool("mcp__lazy__lookup", {"word": "plum"}),
            text("Plum found."),
        )
        telegram.inject_message(OWNER, "look up plum")
        await final_reply(bot, "Plum found.")
        first, _, last = llm.requests[-3:]
        names = [s["function"]["name"] for s in first["tools"]]
        assert not [n for n in names if n.startswith("mcp__")]
        system = first["messages"][0]["content"]
        assert "- mcp__lazy__lookup: Look a word up in the fake dictionary." in system
        loaded = [s["function"]["name"] for s in last["tools"]]
        assert "mcp__lazy__lookup" in loaded
        assert "plum: a word of 4 letters" in tool_results(llm)[-1]
    finally:
        await bot.stop()


async def test_a_server_error_quoting_a_secret_is_redacted_in_the_listing(tmp_path: Path) -> None:
    leaky = "literal-secret-9012"
    servers = server_table(
        "a", url="http://127.0.0.1:9/mcp", headers={"X-Key": leaky}, enabled=False
    ) + server_table("b", command=f"/nonexistent/{leaky}")
    code, out, err = await augure("mcp", "list", env=cli_home(tmp_path, servers), timeout=60)
    assert code == 0, err
    assert "b: down (" in out and "[REDACTED:MCP_A_HEADERS_X_KEY]" in out
    assert leaky not in out + err


@pytest.fixture
def hung_servers() -> str:
    # A turn waits for it only this long (tests/e2e/test_mcp_ready.py has the bound).
    startup = "[mcp]\nstartup_timeout_seconds = 1\n"
    sleep = ["-c", "import time; time.sleep(600)"]
    return startup + server_table("hung", command=sys.executable, args=sleep)


async def test_a_server_that_never_answers_delays_only_its_startup_wait_and_is_stopped(
    tmp_path: Path,
    telegram: Any,
    llm: Any,
    monkeypatch: pytest.MonkeyPatch,
    hung_servers: str,
) -> None:
    bot = Bot(_home_with(tmp_path, hung_servers), telegram, llm, monkeypatch)
    await bot.start()
    try:
        llm.script(text("Answered."))
        telegram.inject_message(OWNER, "hi")
        await final_reply(bot, "Answered.")
        telegram.inject_message(OWNER, "/status")
        await telegram.wait_for(
            lambda c: (
                c.method == "sendMessage" and "MCP: hung starting" in str(c.params.get("text"))
            )
        )
        children = [
            child
            for child in psutil.Process().children(recursive=True)
            if "time.sleep(600)" in " ".join(child.cmdline())
        ]
        assert len(children) == 1
    finally:
        await bot.stop()
    (child,) = children
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
