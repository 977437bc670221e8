from pathlib import Path

import pytest

from augure.config.settings import ConfigError, load_config

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
        ("[agnet]\nmax_loops = 3\n", {}, "agnet: unknown section; did you mean agent?"),
        ("", {"AUGURE__APPROVAL__TIMEOUT_SECONDS": "soon"}, "AUGURE__APPROVAL__TIMEOUT_SECONDS"),
        ("", {"AUGURE_ALLOWED_USERS": "alice"}, "the environment variable AUGURE_ALLOWED_USERS"),
        ("[llm\nmodel=1", {}, "not valid TOML"),
        # Where the config came from is not itself a key anyone can set.
        ("file = 'elsewhere.toml'\n", {}, "file: unknown section"),
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


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[agent]\nmax_loop = 3\n", "agent.max_loop: unknown key; did you mean agent.max_loops?"),
        (
            "[tools.emial]\nimap_host = 'x'\n",
            "tools.emial: unknown section; did you mean tools.email?",
        ),
        (
            "[tools.email]\nimap_prot = 993\n",
            "tools.email.imap_prot: unknown key; did you mean tools.email.imap_port?",
        ),
        ("[tools.http]\ntimeout_seconds = 'soon'\n", "tools.http.timeout_seconds: Input should be"),
        ("[tools]\nenabeld = ['*']\n", "tools.enabeld: unknown key; did you mean tools.enabled?"),
        (
            "[tools.http.presets.api]\nbase_ur = 'https://a.example'\n",
            "tools.http.presets.api.base_ur: unknown key; "
            "did you mean tools.http.presets.api.base_url?",
        ),
        (
            "[llm.coding]\nmodle = 'x'\n",
            "llm.coding.modle: unknown key; did you mean llm.coding.model?",
        ),
    ],
)
def test_unknown_keys_and_sections_suggest_the_closest_and_name_the_file(
    tmp_path: Path, toml: str, expected: str
) -> None:
    (tmp_path / "augure.toml").write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path)
    message = str(caught.value)
    assert expected in message
    assert f"(from {tmp_path / 'augure.toml'}, " in message
    assert "\n" not in message


def test_section_variable_errors_name_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUGURE__TOOLS__HTTP__TIMEOUT_SECONDS", "soon")
    with pytest.raises(ConfigError, match="the environment variable AUGURE__TOOLS__HTTP__TIMEOUT"):
        load_config(home=tmp_path)


def test_env_file_fills_missing_variables_and_is_named_in_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from augure.config import settings as config_module

    monkeypatch.setattr(os, "environ", dict(os.environ))
    monkeypatch.setattr(config_module, "_FROM_ENV_FILE", {})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-real-environment")
    (tmp_path / ".env").write_text(
        "TELEGRAM_BOT_TOKEN=42:from-file\nOPENAI_API_KEY=sk-from-file\nAUGURE_ALLOWED_USERS=bob\n"
    )
    assert config_module.load_env_file(tmp_path) == tmp_path / ".env"
    assert os.environ["TELEGRAM_BOT_TOKEN"] == "42:from-file"
    assert os.environ["OPENAI_API_KEY"] == "sk-from-the-real-environment"
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path)
    message = str(caught.value)
    assert f"(from AUGURE_ALLOWED_USERS in {tmp_path / '.env'})" in message
    assert "from-file" not in message and "sk-" not in message


def test_a_bad_secret_value_is_never_echoed(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text("[tools.github]\ntoken = ['ghp_secretvalue123']\n")
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path)
    assert "tools.github.token" in str(caught.value)
    assert "ghp_secretvalue123" not in str(caught.value)


def test_the_owner_is_telegram_owner_else_the_first_allowed_user(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text("[telegram]\nallowed_users = [11, 22]\n")
    first = load_config(home=tmp_path)
    assert first.owner_chat == "11"
    assert not first.guest_chat("11") and first.guest_chat("22") and first.guest_chat("-100")
    assert not first.guest_chat(None) and not first.guest_chat("job:daily")
    assert first.inbox_dir("11") == tmp_path / "inbox"
    assert first.inbox_dir("22") == tmp_path / "inboxes" / "22"

    (tmp_path / "augure.toml").write_text("[telegram]\nallowed_users = [11, 22]\nowner = 22\n")
    chosen = load_config(home=tmp_path)
    assert chosen.owner_chat == "22" and chosen.guest_chat("11") and not chosen.guest_chat("22")
    assert chosen.inbox_dir("22") == tmp_path / "inbox"


def test_an_owner_who_is_not_allowed_is_refused(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text("[telegram]\nallowed_users = [11]\nowner = 33\n")
    with pytest.raises(ConfigError, match="owner must be one of allowed_users"):
        load_config(home=tmp_path)
