"""Tools own their settings: the model a tool declares is what `[tools.NAME]` is checked against."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from augure.config.settings import ConfigError, load_config
from augure.config.tools import declared, settings_for
from tests.unit.test_config import clean_env  # noqa: F401  (autouse: no stray variables)


@settings_for("weather_probe")
class WeatherProbeSettings(BaseModel):
    """A deployment's own tool, declared the way the built-in ones are."""

    model_config = ConfigDict(extra="forbid")

    station: str = "LFPG"
    every_minutes: int = Field(default=10, gt=0)


def load(tmp_path: Path, toml: str) -> str:
    (tmp_path / "augure.toml").write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path)
    return str(caught.value)


def test_a_tools_declared_section_is_accepted_as_declared(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text("[tools.weather_probe]\nstation = 'EGLL'\n")
    config = load_config(home=tmp_path)
    section = config.tools.section("weather_probe")
    assert WeatherProbeSettings.model_validate(section).station == "EGLL"


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            "[tools.weather_probe]\nevery_minuts = 5\n",
            "tools.weather_probe.every_minuts: unknown key; "
            "did you mean tools.weather_probe.every_minutes?",
        ),
        (
            "[tools.weather_probe]\nevery_minutes = 0\n",
            "tools.weather_probe.every_minutes: Input should be greater than 0",
        ),
        (
            "[tools.weather_prob]\nstation = 'EGLL'\n",
            "tools.weather_prob: unknown section; did you mean tools.weather_probe?",
        ),
    ],
)
def test_a_tools_declared_model_refuses_what_it_does_not_hold(
    tmp_path: Path, toml: str, expected: str
) -> None:
    assert expected in load(tmp_path, toml)


def test_each_built_in_section_is_declared_by_the_module_of_its_name() -> None:
    """The loader finds `[tools.NAME]` by importing `augure.tools.NAME` only."""
    sections = declared(builtin_only=True)
    assert {"web_search", "http", "email", "github", "browser", "opencode"} <= set(sections)
    assert "weather_probe" not in sections
    for name in sections:
        assert importlib.util.find_spec(f"augure.tools.{name}") is not None, name


def test_a_second_model_for_a_declared_section_is_refused() -> None:
    class Other(BaseModel):
        pass

    with pytest.raises(ValueError, match=r"\[tools.weather_probe\] is declared twice"):
        settings_for("weather_probe")(Other)


def test_loading_imports_only_the_tool_modules_of_the_sections_set(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text(
        "[tools.github]\n[tools.email]\n[tools.opencode]\n[tools.browser]\nheadless = true\n"
    )
    probe = (
        "import sys, json; from pathlib import Path; "
        "from augure.config.settings import load_config; "
        f"load_config(home=Path({str(tmp_path)!r})); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('augure.tools.'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "augure.tools.browser" in loaded  # its section holds a key to check
    assert not loaded & {"augure.tools.github", "augure.tools.email", "augure.tools.opencode"}
