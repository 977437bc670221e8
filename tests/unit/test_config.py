from pathlib import Path

import pytest

from augure.config import ConfigError, load_config

PLAIN = [
    "TELEGRAM_BOT_TOKEN",
    "AUGURE_TELEGRAM_API_URL",
    "AUGURE_ALLOWED_USERS",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AUGURE_MODEL",
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PLAIN:
        monkeypatch.delenv(name, raising=False)
    import os

    for name in list(os.environ):
        if name.startswith("AUGURE__"):
            monkeypatch.delenv(name)


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config = load_config(home=tmp_path)
    assert config.agent.max_loops == 10
    assert config.approval.timeout_seconds == 120
    assert config.telegram.allowed_users == []
    assert config.telegram.api_url == "https://api.telegram.org"
    assert config.db_path == tmp_path / "state.db"


def test_file_then_plain_variables_then_section_overrides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "augure.toml").write_text(
        '[llm]\nmodel = "from-file"\n[agent]\nmax_loops = 4\npersona = "Be terse."\n'
        "[tools.http]\ntimeout_seconds = 7\n"
    )
    monkeypatch.setenv("AUGURE_MODEL", "from-plain")
    monkeypatch.setenv("AUGURE_ALLOWED_USERS", "11, 22")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:abc")
    monkeypatch.setenv("AUGURE__APPROVAL__TIMEOUT_SECONDS", "5")
    config = load_config(home=tmp_path)
    assert config.llm.model == "from-plain"
    assert config.agent.max_loops == 4
    assert config.agent.persona == "Be terse."
    assert config.telegram.allowed_users == [11, 22]
    assert config.telegram.token is not None
    assert config.telegram.token.get_secret_value() == "123:abc"
    assert config.approval.timeout_seconds == 5
    assert config.tools.section("http") == {"timeout_seconds": 7}

    monkeypatch.setenv("AUGURE__LLM__MODEL", "from-section-variable")
    assert load_config(home=tmp_path).llm.model == "from-section-variable"


def test_home_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUGURE_HOME", str(tmp_path / "elsewhere"))
    assert load_config().home == tmp_path / "elsewhere"


@pytest.mark.parametrize(
    ("toml", "env", "expected"),
    [
        ("[agent]\nmax_loops = 'many'\n", {}, "agent.max_loops"),
        ("[agent]\ntimezone = 'Mars/Olympus'\n", {}, "agent.timezone"),
        ("[agnet]\nmax_loops = 3\n", {}, "agnet: unknown key"),
        ("", {"AUGURE__APPROVAL__TIMEOUT_SECONDS": "soon"}, "AUGURE__APPROVAL__TIMEOUT_SECONDS"),
        ("", {"AUGURE_ALLOWED_USERS": "alice"}, "telegram.allowed_users"),
        ("[llm\nmodel=1", {}, "not valid TOML"),
    ],
)
def test_bad_values_name_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, env: dict[str, str], expected: str
) -> None:
    (tmp_path / "augure.toml").write_text(toml)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path)
    message = str(caught.value)
    assert expected in message
    assert "\n" not in message


def test_missing_explicit_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.toml", home=tmp_path)
