"""The `augure` command as a user runs it: a real process against the fakes."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import OWNER, bot_environment
from tests.e2e.helpers import augure, environment
from tests.fakes.openai import FakeOpenAI, text, tool
from tests.fakes.telegram import FakeTelegram


async def test_tools_list_json_and_run(tmp_path: Path) -> None:
    code, out, _ = await augure("tools", "list", "--json", env=environment(tmp_path))
    assert code == 0
    listed = {entry["name"]: entry for entry in json.loads(out)}
    assert {"datetime", "memory_read", "memory_write"} <= set(listed)
    for entry in listed.values():
        assert set(entry) == {"name", "description", "parameters", "risk", "egress"}
    assert listed["memory_write"]["parameters"]["required"] == ["path", "content"]

    code, out, _ = await augure(
        "tools",
        "run",
        "datetime",
        "--args",
        '{"timezone": "Asia/Tokyo"}',
        env=environment(tmp_path),
    )
    assert code == 0 and "Asia/Tokyo" in out and "+0900" in out


async def test_tools_run_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    env = environment(tmp_path)
    code, _, err = await augure("tools", "run", "nope", env=env)
    assert code == 1 and err.strip() == "augure: unknown tool 'nope'; see `augure tools list`"
    code, _, err = await augure("tools", "run", "datetime", "--args", "{bad", env=env)
    assert code == 1 and err.startswith("augure: --args is not valid JSON")
    code, out, _ = await augure(
        "tools", "run", "memory_read", "--args", '{"path": "../../etc/passwd"}', env=env
    )
    assert code == 1 and out.startswith("Error:") and "root:" not in out


async def test_memory_list_and_show(tmp_path: Path) -> None:
    env = environment(tmp_path)
    await augure(
        "tools", "run", "memory_write", "--args", '{"path": "a.md", "content": "alpha"}', env=env
    )
    code, out, _ = await augure("memory", "list", env=env)
    assert code == 0 and "a.md" in out and "identity.md" in out
    code, out, _ = await augure("memory", "show", "a.md", env=env)
    assert code == 0 and out == "alpha"
    code, _, err = await augure("memory", "show", "../x", env=env)
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err


async def test_bad_config_and_missing_token_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text("[agent]\nmax_loops = 'lots'\n")
    code, _, err = await augure("tools", "list", env=environment(tmp_path))
    assert code == 1 and "agent.max_loops" in err and err.count("\n") == 1
    (tmp_path / "augure.toml").unlink()
    code, _, err = await augure("run", env=environment(tmp_path))
    assert code == 1 and "TELEGRAM_BOT_TOKEN" in err and "Traceback" not in err
    unreachable = {"TELEGRAM_BOT_TOKEN": "1:x", "AUGURE_TELEGRAM_API_URL": "http://127.0.0.1:9"}
    code, _, err = await augure("run", env=environment(tmp_path, unreachable))
    assert code == 1 and "AUGURE_TELEGRAM_API_URL" in err and "Traceback" not in err


@pytest.mark.system_package("chromium")
@pytest.mark.system_package("bubblewrap")
async def test_doctor_checks_both_endpoints(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        llm.script(text("OK"))
        code, out, _ = await augure("doctor", env=env)
        assert code == 0, out
        assert f"ok    llm: {llm.base_url} answers with model test-model" in out
        assert "ok    telegram: getMe: @augure_test_bot" in out
        assert "ok    tool datetime: ready" in out
        assert "ok    browser: Chromium" in out
        assert "ok    sandbox:" in out
        assert "warn  tool email: set [tools.email]" in out

    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
    env["AUGURE__LLM__MAX_RETRIES"] = "0"
    code, out, _ = await augure("doctor", env=env)
    assert code == 1
    assert "FAIL  llm:" in out and "FAIL  telegram:" in out
    assert telegram.token not in out and "sk-test-secret-key" not in out


async def test_chat_in_the_terminal(tmp_path: Path) -> None:
    async with FakeOpenAI() as llm:
        llm.script(
            tool("memory_write", {"path": "todo.md", "content": "buy milk"}),
            text("Saved your todo."),
        )
        env = environment(tmp_path, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "sk-x"})
        code, out, err = await augure("chat", env=env, stdin="remember: buy milk\n")
        assert code == 0, err
        assert out.strip() == "Saved your todo."
        assert (tmp_path / "memory" / "todo.md").read_text() == "buy milk"


async def test_run_answers_stops_on_sigterm_and_keeps_history(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))

        async def start() -> asyncio.subprocess.Process:
            return await asyncio.create_subprocess_exec(
                sys.executable, "-m", "augure", "run", env=env,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip

        process = await start()
        llm.script(text("Hi from a real process."))
        telegram.inject_message(OWNER, "My favourite colour is teal")
        await telegram.wait_for("sendMessage", timeout=20)

        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 10)
        assert time.monotonic() - stopping < 10
        assert process.returncode == 0

        process = await start()
        llm.script(text("Teal."))
        telegram.inject_message(OWNER, "What is my favourite colour?")
        await telegram.wait_for("sendMessage", count=2, timeout=20)
        contents = [m.get("content") for m in llm.requests[-1]["messages"]]
        assert "My favourite colour is teal" in contents
        process.send_signal(signal.SIGINT)
        await asyncio.wait_for(process.wait(), 10)
