"""`augure init` against the fake Telegram and the scripted OpenAI server
(docs/reference/commands.md#augure-init)."""

from __future__ import annotations

import stat
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from dotenv import dotenv_values

from augure.config.settings import load_config
from tests.e2e.helpers import augure, environment
from tests.fakes.openai import FakeOpenAI, error, text
from tests.fakes.telegram import FakeTelegram

KEY = "sk-init-secret-key"


@pytest.fixture
async def services() -> AsyncIterator[tuple[FakeTelegram, FakeOpenAI]]:
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        yield telegram, llm


def flags(telegram: FakeTelegram, llm: FakeOpenAI, **changes: str) -> list[str]:
    values = {
        "--token": telegram.token,
        "--owner": "123456789",
        "--base-url": llm.base_url,
        "--api-key": KEY,
        "--model": "test-model",
    } | changes
    return ["init", "--non-interactive", *[part for pair in values.items() for part in pair]]


def env_for(home: Path, telegram: FakeTelegram) -> dict[str, str]:
    return environment(home, {"AUGURE_TELEGRAM_API_URL": telegram.root})


async def test_non_interactive_init_checks_then_writes_config_and_secrets(
    tmp_path: Path, services: tuple[FakeTelegram, FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    telegram, llm = services
    home = tmp_path / "home"
    llm.script(text("OK"))
    code, out, err = await augure(*flags(telegram, llm), env=env_for(home, telegram))
    assert code == 0, err
    assert telegram.sent("getMe") and llm.requests[0]["max_tokens"] == 1

    toml = (home / "augure.toml").read_text()
    assert telegram.token not in toml and KEY not in toml
    assert telegram.token not in out + err and KEY not in out + err
    assert {"llm", "agent", "telegram", "approval", "sandbox", "tools"} <= set(tomllib.loads(toml))
    secrets = home / ".env"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert dotenv_values(secrets) == {"TELEGRAM_BOT_TOKEN": telegram.token, "OPENAI_API_KEY": KEY}

    for name in ("AUGURE_MODEL", "OPENAI_BASE_URL", "AUGURE_ALLOWED_USERS"):
        monkeypatch.delenv(name, raising=False)
    config = load_config(home=home)
    assert config.llm.model == "test-model" and config.llm.base_url == llm.base_url
    assert config.telegram.allowed_users == [123456789]


async def test_an_existing_config_is_kept_unless_forced(
    tmp_path: Path, services: tuple[FakeTelegram, FakeOpenAI]
) -> None:
    telegram, llm = services
    home = tmp_path / "home"
    home.mkdir()
    (home / "augure.toml").write_text("# mine\n")
    code, _, err = await augure(*flags(telegram, llm), env=env_for(home, telegram))
    assert code == 1 and err.count("\n") == 1
    assert "augure.toml already exists; use --force to replace it" in err
    assert (home / "augure.toml").read_text() == "# mine\n" and not llm.requests

    llm.script(text("OK"))
    code, _, err = await augure(*flags(telegram, llm), "--force", env=env_for(home, telegram))
    assert code == 0, err
    assert (home / "augure.toml").read_text() != "# mine\n"


@pytest.mark.parametrize(
    ("change", "reply", "expected"),
    [
        ({"--token": "999:wrong"}, None, "Telegram rejected the bot token (401): fix --token"),
        ({"--owner": "alice"}, None, "--owner must be your numeric Telegram user id"),
        ({}, error(401, "bad key"), "rejected the API key (401): fix --api-key"),
        ({}, error(404, "The model does not exist"), "does not know the model 'test-model'"),
        (
            {"--base-url": "http://augure-test.invalid/v1"},
            None,
            "does not resolve: check --base-url",
        ),
    ],
)
async def test_a_failed_check_writes_nothing(
    tmp_path: Path,
    services: tuple[FakeTelegram, FakeOpenAI],
    change: dict[str, str],
    reply: object,
    expected: str,
) -> None:
    telegram, llm = services
    if reply is not None:
        llm.script(reply)  # type: ignore[arg-type]
    home = tmp_path / "home"
    code, _, err = await augure(*flags(telegram, llm, **change), env=env_for(home, telegram))
    assert code == 1 and expected in err and err.count("\n") == 1, err
    assert "Traceback" not in err and "999:wrong" not in err
    assert not (home / "augure.toml").exists() and not (home / ".env").exists()


async def test_non_interactive_names_the_missing_flag(tmp_path: Path) -> None:
    code, _, err = await augure("init", "--non-interactive", env=environment(tmp_path / "h"))
    assert code == 1 and err.strip() == "augure: --token is required with --non-interactive"


async def test_interactive_init_asks_and_asks_again_after_a_rejected_token(
    tmp_path: Path, services: tuple[FakeTelegram, FakeOpenAI]
) -> None:
    telegram, llm = services
    llm.script(text("OK"))
    home = tmp_path / "home"
    answers = ["999:wrong", telegram.token, "42", llm.base_url, KEY, ""]
    code, _, err = await augure(
        "init", env=env_for(home, telegram), stdin="\n".join(answers) + "\n"
    )
    assert code == 0, err
    assert "Telegram rejected the bot token (401): fix the token you pasted" in err
    assert err.count("Telegram bot token") == 2 and "Model [gpt-4o-mini]" in err
    assert dotenv_values(home / ".env")["TELEGRAM_BOT_TOKEN"] == telegram.token
    assert llm.requests[-1]["model"] == "gpt-4o-mini"
    assert 'model = "gpt-4o-mini"' in (home / "augure.toml").read_text()


async def test_interactive_init_checks_each_answer_as_it_is_typed(
    tmp_path: Path, services: tuple[FakeTelegram, FakeOpenAI]
) -> None:
    """A rejected answer is said at once, in the prompt's words (no flag names), and asked
    again with no default taken from it; the other answers are not asked twice."""
    telegram, llm = services
    llm.script(text("OK"))
    home = tmp_path / "home"
    answers = ["999:wrong", telegram.token, "alice", "42", llm.base_url, KEY, ""]
    code, _, err = await augure(
        "init", env=env_for(home, telegram), stdin="\n".join(answers) + "\n"
    )
    assert code == 0, err
    assert "--token" not in err and "--owner" not in err, err
    rejected = err.index("Telegram rejected the bot token (401)")
    assert rejected < err.index("Your Telegram user id"), err  # said before the next question
    assert err.count("Telegram bot token") == 2 and err.count("Your Telegram user id") == 2
    assert "not 'alice'" in err and "[alice]" not in err, err
    assert len(telegram.sent("getMe")) == 1  # the accepted token, checked once
    assert load_config(home=home).telegram.allowed_users == [42]


async def test_an_endpoint_that_answers_404_is_offered_with_v1(
    tmp_path: Path, services: tuple[FakeTelegram, FakeOpenAI]
) -> None:
    telegram, llm = services
    home = tmp_path / "home"
    root = llm.base_url.removesuffix("/v1")
    llm.script(text("OK"))
    answers = [telegram.token, "42", root, KEY, "test-model", ""]  # "": take the offer
    code, _, err = await augure(
        "init", env=env_for(home, telegram), stdin="\n".join(answers) + "\n"
    )
    assert code == 0, err
    assert f"did you mean {llm.base_url}?" in err, err
    assert f"[{llm.base_url}]" in err and "--base-url" not in err, err
    assert tomllib.loads((home / "augure.toml").read_text())["llm"]["base_url"] == llm.base_url


async def test_the_telegram_api_url_used_is_saved(
    tmp_path: Path, services: tuple[FakeTelegram, FakeOpenAI]
) -> None:
    telegram, llm = services
    home = tmp_path / "home"
    llm.script(text("OK"))
    code, _, err = await augure(*flags(telegram, llm), env=env_for(home, telegram))
    assert code == 0, err
    assert tomllib.loads((home / "augure.toml").read_text())["telegram"]["api_url"] == (
        telegram.root
    )


async def test_skip_checks_sets_up_offline_and_still_checks_the_form(tmp_path: Path) -> None:
    home = tmp_path / "home"
    words = ["init", "--non-interactive", "--skip-checks", "--token", "123:abc"]
    code, _, err = await augure(*words, "--owner", "alice", env=environment(home))
    assert code == 1 and "--owner must be your numeric Telegram user id" in err, err
    code, out, err = await augure(*words, "--owner", "42", env=environment(home))
    assert code == 0, err
    assert "not checked" in out, out
    assert dotenv_values(home / ".env")["TELEGRAM_BOT_TOKEN"] == "123:abc"
