"""`augure doctor` tells each failure of Telegram and the LLM endpoint apart
(docs/reference/commands.md#augure-doctor)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from augure.cli import doctor
from augure.config.settings import Config, load_config
from tests.e2e.conftest import bot_environment
from tests.e2e.helpers import augure, environment
from tests.fakes.openai import FakeOpenAI, Reply, error, text
from tests.fakes.telegram import FakeTelegram

KEY = "sk-test-secret-key"
# RFC 6761: names under .invalid never resolve.
NOWHERE = "http://augure-test.invalid"
REFUSING = "http://127.0.0.1:9"


def configure(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    **changes: str,
) -> Config:
    for name, value in (environment(tmp_path, bot_environment(tmp_path, telegram, llm))).items():
        monkeypatch.setenv(name, value)
    for name, value in changes.items():
        monkeypatch.setenv(name, value)
    return load_config()


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"TELEGRAM_BOT_TOKEN": "999:not-the-token"},
            "Telegram rejected the bot token (401): "
            "fix the environment variable TELEGRAM_BOT_TOKEN",
        ),
        (
            {"AUGURE_TELEGRAM_API_URL": NOWHERE},
            "host augure-test.invalid does not resolve: "
            "check the environment variable AUGURE_TELEGRAM_API_URL",
        ),
        (
            {"AUGURE_TELEGRAM_API_URL": REFUSING},
            "127.0.0.1 refuses connections: check the environment variable AUGURE_TELEGRAM_API_URL",
        ),
    ],
)
async def test_telegram_failures_are_told_apart(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    changes: dict[str, str],
    expected: str,
) -> None:
    check = await doctor._telegram(configure(tmp_path, telegram, llm, monkeypatch, **changes))
    assert not check.ok and check.detail == expected
    assert telegram.token not in check.line() and "not-the-token" not in check.line()


def rejects(status: int, message: str) -> Callable[[FakeOpenAI], None]:
    def script(llm: FakeOpenAI) -> None:
        llm.script(error(status, message))

    return script


@pytest.mark.parametrize(
    ("script", "changes", "expected"),
    [
        (
            rejects(401, "Incorrect API key provided"),
            {},
            "rejected the API key (401): fix the environment variable OPENAI_API_KEY",
        ),
        (
            rejects(403, "Project does not have access to model test-model"),
            {},
            "does not let this API key use the model 'test-model' (403): fix the environment "
            "variable AUGURE_MODEL or the environment variable OPENAI_API_KEY",
        ),
        (
            rejects(404, "The model `test-model` does not exist"),
            {},
            "does not know the model 'test-model': fix the environment variable AUGURE_MODEL",
        ),
        (
            None,
            {"OPENAI_BASE_URL": f"{NOWHERE}/v1"},
            "host augure-test.invalid does not resolve: "
            "check the environment variable OPENAI_BASE_URL",
        ),
        (
            None,
            {"OPENAI_BASE_URL": f"{REFUSING}/v1"},
            "127.0.0.1 refuses connections: check the environment variable OPENAI_BASE_URL",
        ),
    ],
)
async def test_llm_failures_are_told_apart(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    script: Callable[[FakeOpenAI], None] | None,
    changes: dict[str, str],
    expected: str,
) -> None:
    if script is not None:
        script(llm)
    check = await doctor._llm(configure(tmp_path, telegram, llm, monkeypatch, **changes))
    assert not check.ok and check.detail.endswith(expected), check.detail
    assert KEY not in check.line()


async def test_llm_check_makes_one_tiny_call(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm.script(text("OK"))
    check = await doctor._llm(configure(tmp_path, telegram, llm, monkeypatch))
    assert check.ok and check.detail == f"{llm.base_url} answers with model test-model"
    (request,) = llm.requests
    assert request["model"] == "test-model" and request["max_tokens"] == 1


async def test_a_value_from_the_file_is_named_with_file_and_key(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "augure.toml").write_text('[llm]\nmodel = "gpt-nope"\n')
    configure(tmp_path, telegram, llm, monkeypatch)
    monkeypatch.delenv("AUGURE_MODEL")
    config = load_config()
    llm.script(Reply(status=404, error_message="The model `gpt-nope` does not exist"))
    check = await doctor._llm(config)
    assert check.detail.endswith(
        f"does not know the model 'gpt-nope': fix {tmp_path / 'augure.toml'}, key model in [llm]"
    )


async def test_doctor_command_prints_each_failure_and_exits_non_zero(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        env["TELEGRAM_BOT_TOKEN"] = "999:not-the-token"
        llm.script(error(404, "The model `test-model` does not exist"))
        code, out, err = await augure("doctor", env=env, timeout=60)
    assert code == 1, out + err
    assert "FAIL  telegram: Telegram rejected the bot token (401)" in out
    assert "FAIL  llm: " in out and "does not know the model 'test-model'" in out
    assert "Traceback" not in out + err
    assert "not-the-token" not in out + err and KEY not in out + err


# What a line must not show: the class of the exception behind it means nothing to the owner.
CLASS_NAMES = ("Error", "BadRequest", "Exception")


@pytest.mark.parametrize(
    ("status", "description", "expected"),
    [
        (
            400,
            "bot is not allowed here",
            "the Bot API at 127.0.0.1 refused getMe (Bot is not allowed here): "
            "check the environment variable TELEGRAM_BOT_TOKEN",
        ),
        (
            502,
            None,
            "the Bot API at 127.0.0.1 answered with an error (Bad Gateway): "
            "check the environment variable AUGURE_TELEGRAM_API_URL",
        ),
    ],
    ids=["refused", "a gateway error"],
)
async def test_telegram_answering_an_error_is_told_without_a_class_name(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    status: int,
    description: str | None,
    expected: str,
) -> None:
    telegram.plan_error("getMe", status, description=description)
    check = await doctor._telegram(configure(tmp_path, telegram, llm, monkeypatch))
    assert not check.ok and check.detail == expected, check.detail
    assert not any(name in check.line() for name in CLASS_NAMES), check.line()


async def test_a_browser_that_is_not_there_is_told_without_a_class_name(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "no-such-chromium"
    config = configure(
        tmp_path, telegram, llm, monkeypatch,
        AUGURE__TOOLS__BROWSER__EXECUTABLE_PATH=str(missing),
    )  # fmt: skip
    check = await doctor._browser(config)
    assert not check.ok and "[tools.browser] executable_path" in check.detail, check.detail
    assert not any(name in check.line() for name in CLASS_NAMES), check.line()


def test_doctor_checks_the_voice_converter_only_when_replies_are_spoken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGURE__VOICE__REPLIES", "voice_in")
    config = load_config(home=tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))  # no opusenc here
    missing = doctor._voice(config)
    assert not missing.ok and not missing.required
    assert "opusenc is missing" in missing.line() and "apt install opus-tools" in missing.line()
    fake = tmp_path / "opusenc"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert doctor._voice(config).line() == (
        f"ok    voice: [voice] replies = voice_in; {fake} turns WAV speech into OGG/Opus"
    )


async def test_doctor_does_not_call_a_browser_that_cannot_start_ready(tmp_path: Path) -> None:
    """The tool line follows the launch the browser line tried, not only the file's presence."""
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(tmp_path, bot_environment(tmp_path, telegram, llm))
        env["AUGURE__TOOLS__BROWSER__EXECUTABLE_PATH"] = str(broken)
        llm.script(text("OK"))
        _, out, err = await augure("doctor", env=env, timeout=120)
    assert f"warn  browser: Chromium at {broken} does not start" in out, out + err
    (line,) = [line for line in out.splitlines() if "tool browser:" in line]
    assert line == "warn  tool browser: not ready: see the browser line above"
