"""Faults that name their true source and fix (docs/telegram.md): a setting read from
`augure.toml` is named by file and key, one read from a variable by the variable; a model
fault that a retry cannot fix reaches the owner in `augure doctor`'s words, never with "try
again"."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from pydantic import SecretStr

from augure.cli import doctor
from augure.config.llm import LLMConfig
from augure.config.settings import load_config
from augure.llm.client import LLM
from augure.llm.faults import Fault, LLMError
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import augure, environment
from tests.fakes.openai import FakeOpenAI, Reply, error, quota_exhausted, text, too_long
from tests.fakes.telegram import FakeTelegram

WRONG_TOKEN = "999999:WRONG-token-never-valid"
KEY = "sk-test-secret-key"


@pytest.mark.parametrize("source", ["augure.toml", ".env", "variable"])
async def test_a_rejected_token_at_start_names_where_it_came_from(
    tmp_path: Path, source: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = environment(home, bot_environment(home, telegram, llm))
        del env["TELEGRAM_BOT_TOKEN"]
        if source == "augure.toml":
            (home / "augure.toml").write_text(f'[telegram]\ntoken = "{WRONG_TOKEN}"\n')
            fix = f"{home / 'augure.toml'}, key token in [telegram]"
        elif source == ".env":
            (home / ".env").write_text(f"TELEGRAM_BOT_TOKEN={WRONG_TOKEN}\n")
            fix = f"TELEGRAM_BOT_TOKEN in {home / '.env'}"
        else:
            env["TELEGRAM_BOT_TOKEN"] = WRONG_TOKEN
            fix = "the environment variable TELEGRAM_BOT_TOKEN"
        code, _, err = await augure("run", env=env)
    assert code == 1
    told = err.strip().splitlines()[-1]
    assert told == f"augure: Telegram rejected the bot token (401): fix {fix}"
    assert WRONG_TOKEN not in err and "WRONG-token" not in err


def owner_texts(bot: Bot) -> list[str]:
    return [m["text"] for m in bot.telegram.messages(OWNER)]


# Each case: the endpoint's answer, where the key and model are set, and the words expected
# after the endpoint's address. `{toml}` is the home's augure.toml.
CASES = {
    "401, key from the variable": (
        error(401, "Incorrect API key provided"),
        "variables",
        "rejected the API key (401): fix the environment variable OPENAI_API_KEY",
    ),
    "401, key from augure.toml": (
        error(401, "Incorrect API key provided"),
        "augure.toml",
        "rejected the API key (401): fix {toml}, key api_key in [llm]",
    ),
    "401, no key set": (
        error(401, "You didn't provide an API key"),
        "nowhere",
        "rejected the API key (401): set OPENAI_API_KEY or [llm] api_key in {toml}",
    ),
    "403, model forbidden to the key": (
        error(403, "Project does not have access to model test-model"),
        "variables",
        "does not let this API key use the model 'test-model' (403): "
        "fix the environment variable AUGURE_MODEL or the environment variable OPENAI_API_KEY",
    ),
    "404, model from the variable": (
        error(404, "The model `test-model` does not exist"),
        "variables",
        "does not know the model 'test-model': fix the environment variable AUGURE_MODEL",
    ),
    "404, model from augure.toml": (
        error(404, "The model `test-model` does not exist"),
        "augure.toml",
        "does not know the model 'test-model': fix {toml}, key model in [llm]",
    ),
    "400, conversation too long for the context": (
        too_long(),
        "variables",
        "cannot take a conversation this long for the model 'test-model' (400): send /new to "
        "start a fresh one, or lower the history sent: set [agent] history_tokens in {toml}",
    ),
    "413, request too large": (
        error(413, "Request Entity Too Large"),
        "variables",
        "cannot take a conversation this long for the model 'test-model' (413): send /new to "
        "start a fresh one, or lower the history sent: set [agent] history_tokens in {toml}",
    ),
    "429, quota used up": (
        quota_exhausted(),
        "variables",
        "says the quota of this API key is used up (429): add credit or raise the limit on "
        "the provider's billing page, or change plan",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_model_fault_a_retry_cannot_fix_names_the_fix_in_the_chat_and_the_log(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    case: str,
) -> None:
    reply, where, words = CASES[case]
    home = tmp_path / "home"
    home.mkdir()
    toml = home / "augure.toml"
    extra: dict[str, str] = {}
    if where != "variables":
        # An empty variable counts as unset, so the file (or the default) is what is used.
        extra = {"OPENAI_API_KEY": "", "AUGURE_MODEL": ""}
        toml.write_text('[llm]\nmodel = "test-model"\n')
    if where == "augure.toml":
        toml.write_text(f'[llm]\nmodel = "test-model"\napi_key = "{KEY}"\n')
    caplog.set_level(logging.INFO)
    bot = Bot(home, telegram, llm, monkeypatch, extra_env=extra)
    await bot.start()
    try:
        llm.script(reply)
        telegram.inject_message(OWNER, "hi")
        await telegram.wait_for("sendMessage", timeout=20)
        await telegram.wait_idle(quiet=0.3)
        (message,) = owner_texts(bot)
    finally:
        await bot.stop()
    expected = f"{llm.base_url} {words.format(toml=toml)}"
    assert expected in message, message
    assert "try again" not in message.lower()
    assert len(llm.requests) == 1  # no retry of a fault a retry cannot fix
    logged = [r.getMessage() for r in caplog.records if "LLM call failed" in r.getMessage()]
    assert len(logged) == 1 and expected in logged[0], logged
    assert KEY not in message and KEY not in logged[0]


@pytest.mark.parametrize("status", [429, 500])
async def test_a_fault_a_retry_can_fix_still_says_try_again(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
    status: int,
) -> None:  # fmt: skip
    bot = Bot(tmp_path / "home", telegram, llm, monkeypatch)
    await bot.start()
    try:
        llm.script(*[error(status, "slow down")] * 3)  # the first try and two retries
        telegram.inject_message(OWNER, "hi")
        await telegram.wait_for("sendMessage", timeout=30)
        await telegram.wait_idle(quiet=0.3)
        (message,) = owner_texts(bot)
    finally:
        await bot.stop()
    assert f"answered {status}" in message and "Please try again" in message, message


async def test_a_conversation_longer_than_the_context_names_new_and_the_history_setting(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fake refuses an over-long request by itself, as the real API does."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "augure.toml").write_text("[agent]\nhistory_tokens = 50000\n")
    llm.context_limit = 20
    bot = Bot(home, telegram, llm, monkeypatch)
    await bot.start()
    try:
        telegram.inject_message(OWNER, "hi")
        await telegram.wait_for("sendMessage", timeout=20)
        await telegram.wait_idle(quiet=0.3)
        (message,) = owner_texts(bot)
    finally:
        await bot.stop()
    assert "send /new to start a fresh one" in message, message
    assert f"fix {home / 'augure.toml'}, key history_tokens in [agent]" in message
    assert "try again" not in message.lower()
    assert len(llm.requests) == 1


# What a later fallback to another model reads: `retryable` (429, 5xx, timeout, no
# connection) and `too_long`; never a rejected key, a forbidden or unknown model, or quota.
KINDS = {
    "rate limited": (error(429, "Rate limit reached"), True, False),
    "server error": (error(503, "overloaded"), True, False),
    "too long (400)": (too_long(), False, True),
    "too long (413)": (error(413, "Request Entity Too Large"), False, True),
    "quota": (quota_exhausted(), False, False),
    "key": (error(401, "Incorrect API key provided"), False, False),
    "access": (error(403, "Project does not have access"), False, False),
    "model": (error(404, "The model `test-model` does not exist"), False, False),
    "timeout": (text("late", delay=3), True, False),
}


@pytest.mark.parametrize("kind", list(KINDS))
async def test_each_fault_says_whether_a_retry_or_a_shorter_request_could_help(
    llm: FakeOpenAI, kind: str
) -> None:
    reply, retryable, too_long_request = KINDS[kind]
    llm.script(*[reply] * 3)
    model = LLM(
        LLMConfig(
            base_url=llm.base_url,
            api_key=SecretStr("sk-test"),
            model="test-model",
            max_retries=0,
            request_timeout_seconds=1,
        )
    )
    try:
        with pytest.raises(LLMError) as caught:
            await model.complete([{"role": "user", "content": "hi"}])
    finally:
        await model.close()
    fault = caught.value.fault
    assert isinstance(fault, Fault)
    assert (fault.retryable, fault.too_long) == (retryable, too_long_request)


async def test_an_unreachable_endpoint_is_a_fault_a_retry_could_fix() -> None:
    config = LLMConfig(
        base_url="http://127.0.0.1:9/v1", api_key=SecretStr("sk-test"), max_retries=0
    )
    model = LLM(config)
    try:
        with pytest.raises(LLMError) as caught:
            await model.complete([{"role": "user", "content": "hi"}])
    finally:
        await model.close()
    assert caught.value.fault is not None and caught.value.fault.retryable


async def test_a_quota_used_up_is_not_retried_and_doctor_says_so(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environment(tmp_path, bot_environment(tmp_path, telegram, llm)).items():
        monkeypatch.setenv(name, value)
    llm.script(quota_exhausted())
    model = LLM(load_config().llm)  # two retries, as the bot is configured
    try:
        with pytest.raises(LLMError):
            await model.complete([{"role": "user", "content": "hi"}])
    finally:
        await model.close()
    assert len(llm.requests) == 1  # the SDK retries a 429 unless told this one is final
    llm.script(quota_exhausted())
    check = await doctor._llm(load_config())
    assert not check.ok
    assert check.detail.endswith(
        "says the quota of this API key is used up (429): add credit or raise the limit on "
        "the provider's billing page, or change plan"
    ), check.detail


# No Python class name reaches the chat: the owner is told what happened and what to do next.
CLASS_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:Error|Exception)?\b|Error\b")


@pytest.mark.parametrize(
    ("failure", "next_step"),
    [
        (error(400, "Invalid file format."), "send it as text"),
        (error(503, "overloaded"), "try again"),
    ],
)
async def test_a_failed_transcription_says_what_to_do_without_a_class_name(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    failure: Reply,
    next_step: str,
) -> None:
    caplog.set_level(logging.INFO)
    extra = {"AUGURE__LLM__TRANSCRIPTION_MODEL": "whisper-1"}
    bot = Bot(tmp_path / "home", telegram, llm, monkeypatch, extra_env=extra)
    await bot.start()
    try:
        llm.transcription_failure = failure
        telegram.inject_message(OWNER, voice=b"OggS fake opus bytes")
        await telegram.wait_for("sendMessage", timeout=20)
        await telegram.wait_idle(quiet=0.3)
        (message,) = owner_texts(bot)
    finally:
        await bot.stop()
    assert message.startswith("I could not listen to that voice note"), message
    assert next_step in message.lower(), message
    assert not CLASS_NAME.search(message), message
    assert llm.requests == []  # nothing half-heard is sent to the model
    assert str(failure.status) in caplog.text  # the detail is in the log


async def test_an_internal_error_says_what_to_do_without_a_class_name(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The inbox is a file, so saving a sent document fails inside the bot."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "inbox").write_text("not a folder")
    bot = Bot(home, telegram, llm, monkeypatch)
    await bot.start()
    try:
        telegram.inject_message(OWNER, document=("notes.txt", b"hello"))
        await telegram.wait_for("sendMessage", timeout=20)
        await telegram.wait_idle(quiet=0.3)
        (message,) = owner_texts(bot)
    finally:
        await bot.stop()
    assert not CLASS_NAME.search(message), message
    assert "log" in message and "/new" in message, message
    assert "Error" in caplog.text  # the log keeps the exception and its traceback
