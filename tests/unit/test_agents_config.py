"""`[agents]` and `[agents.NAME]` (docs/reference/execution.md): read, defaulted, and refused with
the key to fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from augure.config.settings import ConfigError, load_config


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("AUGURE", "OPENAI", "TELEGRAM")):
            monkeypatch.delenv(name)


def write(home: Path, toml: str) -> Path:
    (home / "augure.toml").write_text(toml, encoding="utf-8")
    return home


def test_agents_are_read_with_their_defaults(tmp_path: Path) -> None:
    config = load_config(
        home=write(
            tmp_path,
            "[agents.researcher]\ninstructions = 'Find facts.'\ntools = ['web_*']\n"
            "[agents.writer]\ninstructions = 'Write.'\nmodel = 'big-model'\nmax_loops = 3\n",
        )
    )
    researcher, writer = config.agents.named["researcher"], config.agents.named["writer"]
    assert (researcher.model, researcher.tools, researcher.max_loops) == (None, ["web_*"], 8)
    assert (writer.model, writer.tools, writer.max_loops) == ("big-model", [], 3)
    # No `default`: a task naming no agent runs the first one listed.
    assert config.agents.chosen(None) == "researcher"
    assert config.agents.chosen("writer") == "writer"


def test_the_default_agent_is_the_one_named(tmp_path: Path) -> None:
    config = load_config(
        home=write(
            tmp_path,
            "[agents]\ndefault = 'writer'\n[agents.researcher]\ninstructions = 'a'\n"
            "[agents.writer]\ninstructions = 'b'\n",
        )
    )
    assert config.agents.chosen(None) == "writer"


def test_no_agents_by_default(tmp_path: Path) -> None:
    config = load_config(home=tmp_path)
    assert config.agents.named == {} and config.agents.chosen(None) is None


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            "[agents.researcher]\ninstructons = 'Find facts.'\n",
            "agents.researcher.instructons: unknown key; "
            "did you mean agents.researcher.instructions?",
        ),
        ("[agents.researcher]\nmodel = 'x'\n", "agents.researcher.instructions: Field required"),
        (
            "[agents]\ndefault = 'writer'\n[agents.researcher]\ninstructions = 'a'\n",
            "default 'writer' is not an [agents.NAME] table (researcher)",
        ),
        ("[agents]\ndefualt = 'researcher'\n", "unknown key 'defualt'; did you mean default?"),
        (
            "[agents.researcher]\ninstructions = 'a'\nmax_loops = 0\n",
            "agents.researcher.max_loops: Input should be greater than or equal to 1",
        ),
        ("[agents.'two words']\ninstructions = 'a'\n", "agent name 'two words'"),
    ],
)
def test_a_bad_agents_table_is_refused_naming_what_to_fix(
    tmp_path: Path, toml: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(home=write(tmp_path, toml))
    message = str(caught.value)
    assert expected in message and "\n" not in message
    assert str(tmp_path / "augure.toml") in message


def test_agents_keys_can_be_overridden_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGURE__AGENTS__DEFAULT", "writer")
    monkeypatch.setenv("AUGURE__AGENTS__RESEARCHER__MAX_LOOPS", "3")
    config = load_config(
        home=write(
            tmp_path,
            "[agents.researcher]\ninstructions = 'a'\n[agents.writer]\ninstructions = 'b'\n",
        )
    )
    assert config.agents.chosen(None) == "writer"
    assert config.agents.named["researcher"].max_loops == 3
    assert config.agents.named["researcher"].instructions == "a"
