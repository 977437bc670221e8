"""The commented augure.toml of `augure init` is generated from the config models."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from augure.config.settings import load_config
from augure.config.template import DESCRIPTIONS, NOT_SET, all_keys, render

DEFAULT_LINE = re.compile(r"^# ([a-z_]+) = (.*)$")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(("AUGURE", "OPENAI", "TELEGRAM")):
            monkeypatch.delenv(name)


def test_every_section_and_key_is_in_the_file_with_a_description() -> None:
    text = render()
    for key in all_keys():
        assert key.replace(".*.", ".NAME.") in DESCRIPTIONS or key in DESCRIPTIONS, key
        own = key.replace(".*", ".NAME")
        if f"[{own}]" in text or f"[{own}.NAME]" in text:
            continue  # a table of its own
        table, _, name = key.rpartition(".")
        if table:
            table = table.replace(".*", ".NAME")
            section = text.split(f"[{table}]\n", 1)[1].split("\n[", 1)[0]
            assert f"# {name} = " in section or f"\n{name} = " in section, key
        else:
            assert f"[{key}]" in text


def test_uncommenting_every_default_gives_the_default_config(tmp_path: Path) -> None:
    # A description shaped like `key = value` would be mistaken for a setting.
    assert not [text for text in DESCRIPTIONS.values() if DEFAULT_LINE.match(f"# {text}")]
    lines = []
    example = False
    for line in render().splitlines():
        if line.startswith(("[", "# [")):
            example = line.startswith("# [")  # the presets example table stays commented
        match = DEFAULT_LINE.match(line)
        if match and not example and not match.group(2).endswith(f"# {NOT_SET}"):
            line = f"{match.group(1)} = {match.group(2)}"
        lines.append(line)
    (tmp_path / "augure.toml").write_text("\n".join(lines))
    tomllib.loads("\n".join(lines))
    written = load_config(home=tmp_path)
    defaults = load_config(home=tmp_path / "empty")
    assert written.model_dump(exclude={"tools"}) == defaults.model_dump(exclude={"tools"})
    assert written.tools.enabled == defaults.tools.enabled == ["*"]
    for name in ("http", "email", "browser", "web_search", "github", "opencode"):
        assert written.tools.section(name), f"[tools.{name}] defaults were not written"


def test_answers_are_written_active() -> None:
    data = tomllib.loads(render({"llm.model": "m", "telegram.allowed_users": [7]}))
    assert data["llm"] == {"model": "m", "coding": {}, "roles": {}}
    assert data["telegram"] == {"allowed_users": [7]}
