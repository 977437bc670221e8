"""augure/host/logs.py: the log file rotates by size and never holds a secret."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from augure.config.settings import load_config
from augure.host import logs

TOKEN = "123456:ABCdef_ghi-JKL"
API_KEY = "sk-unit-test-key-123"


@pytest.fixture
def root_logging() -> Iterator[None]:
    """The root logger as it was: these tests add handlers to it, as `augure` does."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    names = logs.NOISY_LOGGERS + logs.SILENCED_LOGGERS
    noisy = {name: logging.getLogger(name).level for name in names}
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, old in noisy.items():
        logging.getLogger(name).setLevel(old)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUGURE_HOME", str(tmp_path))
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    return tmp_path


def test_the_file_rotates_by_size_and_keeps_a_few(home: Path, root_logging: None) -> None:
    logs.start(verbose=False)
    path = logs.protect(load_config(), to_file=True, max_bytes=2_000, backups=3)
    assert path == home / "logs" / "augure.log"
    log = logging.getLogger("augure.test")
    for n in range(400):
        log.info("line %d of a chatty run", n)
    files = sorted(p.name for p in path.parent.iterdir())
    assert files == ["augure.log", "augure.log.1", "augure.log.2", "augure.log.3"]
    assert all(p.stat().st_size <= 2_000 for p in path.parent.iterdir())
    assert "line 399 of" in path.read_text()  # the newest lines are in the current file


def test_secrets_and_bot_urls_are_masked_in_the_file_and_on_stderr(
    home: Path, root_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    logs.start(verbose=True)
    path = logs.protect(load_config(), to_file=True)
    assert path is not None
    other_token = "987654:ZYXwvu-tsr_QPO"  # not configured: only the URL pattern can catch it
    logging.getLogger("httpx").warning(
        "HTTP Request: POST http://127.0.0.1:8081/bot%s/getUpdates", other_token
    )
    logging.getLogger("augure.test").info("file at https://api.example/file/bot%s/a.jpg", TOKEN)
    logging.getLogger("augure.test").warning("key is %s", API_KEY)
    try:
        raise RuntimeError(f"failed calling /bot{TOKEN}/sendMessage with {API_KEY}")
    except RuntimeError:
        logging.getLogger("augure.test").exception("it broke")
    written = path.read_text()
    stderr = capsys.readouterr().err
    for text in (written, stderr):
        assert "getUpdates" in text and "it broke" in text and "RuntimeError" in text
        for secret in (TOKEN, other_token, API_KEY, "ABCdef_ghi"):
            assert secret not in text


def test_http_client_loggers_are_quiet(root_logging: None) -> None:
    logs.start(verbose=True)
    for name in ("httpx", "httpx2", "httpcore", "openai", "telegram"):
        assert not logging.getLogger(name).isEnabledFor(logging.INFO), name
    assert logging.getLogger("augure").isEnabledFor(logging.DEBUG)
