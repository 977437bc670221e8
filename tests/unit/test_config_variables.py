"""`AUGURE__SECTION__KEY` variables: how a value is read, and what a bad one is told."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from augure.config.settings import ConfigError, load_config


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("AUGURE") or name in ("TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY"):
            monkeypatch.delenv(name)


def test_a_list_key_takes_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUGURE__GUESTS__TOOLS", '["recall", "memory_*"]')
    assert load_config(home=tmp_path).guests.tools == ["recall", "memory_*"]


def test_allowed_users_take_comma_separated_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGURE__TELEGRAM__ALLOWED_USERS", "11, 22")
    assert load_config(home=tmp_path).telegram.allowed_users == [11, 22]


def test_a_whole_section_as_json_then_its_keys_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGURE__LLM", '{"model": "from-json", "max_retries": 4}')
    monkeypatch.setenv("AUGURE__LLM__MODEL", "from-key")
    config = load_config(home=tmp_path)
    assert (config.llm.model, config.llm.max_retries) == ("from-key", 4)


def test_names_are_read_in_any_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("augure__agent__Max_Loops", "7")
    assert load_config(home=tmp_path).agent.max_loops == 7


def test_a_named_table_and_a_tool_section_below_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "augure.toml").write_text(
        '[tools.http.presets.bank]\nbase_url = "https://file.example"\n'
        '[profiles.work]\norigins = ["chat"]\n'
    )
    monkeypatch.setenv("AUGURE__TOOLS__HTTP__PRESETS__BANK__BASE_URL", "https://var.example")
    monkeypatch.setenv("AUGURE__TOOLS__HTTP__TIMEOUT_SECONDS", "12")
    monkeypatch.setenv("AUGURE__PROFILES__WORK__ORIGINS", '["job:*"]')
    config = load_config(home=tmp_path)
    http = (config.tools.model_extra or {})["http"]
    assert http["presets"]["bank"]["base_url"] == "https://var.example"
    assert http["timeout_seconds"] == "12"  # the tool's own settings read it as a number
    assert config.profiles["work"].origins == ["job:*"]


@pytest.mark.parametrize("value", ["recall", "[recall", '{"tools": 1'])
def test_a_value_that_is_not_json_where_json_is_needed_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("AUGURE__GUESTS__TOOLS", value)
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path)
    line = str(caught.value)
    assert "AUGURE__GUESTS__TOOLS" in line and "JSON" in line
    assert value not in line  # the value may be a secret: never echoed


def test_a_whole_section_that_is_not_json_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGURE__LLM", "model=x")
    with pytest.raises(ConfigError, match="AUGURE__LLM is not valid JSON"):
        load_config(home=tmp_path)


def test_an_empty_variable_for_a_list_is_an_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGURE__GUESTS__TOOLS", "")
    with pytest.raises(ConfigError, match="AUGURE__GUESTS__TOOLS"):
        load_config(home=tmp_path)
