"""Logging for the `augure` command: stderr, and for `augure run` a size-capped file in
`$AUGURE_HOME/logs/` (docs/reference/durability.md#logs). No secret reaches either: every line
passes the redactor."""

from __future__ import annotations

import io
import logging
import re
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

from augure.config.settings import Config
from augure.host.home import PRIVATE_FILE, PRIVATE_FOLDER, HomeError, private_opener, tighten
from augure.host.secrets import RedactingFilter, Redactor

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 5
# HTTP clients log every request URL at INFO, and the Bot API's URLs carry the token.
NOISY_LOGGERS = ("httpx", "httpx2", "httpcore", "openai", "telegram", "hpack", "aiohttp")
# Its one message, a traceback for each non-JSON answer (a proxy's 502 page on every poll of
# an outage), repeats what the error it raises says; the polling code logs that error once.
SILENCED_LOGGERS = ("telegram.request.BaseRequest",)
# `/bot<token>/` and `/file/bot<token>/` in any URL, whichever token it is.
BOT_TOKEN_IN_URL = re.compile(r"(/bot)\d+:[A-Za-z0-9_-]+")


STDERR_HANDLER, FILE_HANDLER = "augure-stderr", "augure-file"


class LogRedactor(RedactingFilter):
    """The configured secrets, and any Bot API token inside a URL, masked in every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        super().filter(record)
        record.msg = BOT_TOKEN_IN_URL.sub(r"\1<token>", str(record.msg))
        return True


class PrivateRotatingFileHandler(RotatingFileHandler):
    """The log quotes the conversations: every file it opens, the first and the new one after
    each rollover, is readable by its owner only (see docs/security.md)."""

    def _open(self) -> io.TextIOWrapper:
        return open(
            self.baseFilename,
            "a",
            encoding=self.encoding,
            errors=self.errors,
            opener=private_opener,
        )


def start(verbose: bool) -> None:
    """Before the config is read: stderr only, libraries quiet."""
    root = logging.getLogger()
    _replace(root, STDERR_HANDLER)
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(STDERR_HANDLER)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(LogRedactor(Redactor({})))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    # A log that cannot be written (a full disk) must not print a traceback per record over
    # the bot's own one-line errors; the bot goes on without it.
    logging.raiseExceptions = False
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in SILENCED_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def protect(
    config: Config, *, to_file: bool, max_bytes: int = MAX_BYTES, backups: int = BACKUPS
) -> Path | None:
    """Once the config is known: redact its secrets on every handler and, with `to_file`,
    also write to `$AUGURE_HOME/logs/augure.log`, rotated at `max_bytes` keeping `backups`
    old files. Returns the file's path."""
    redactor = LogRedactor(Redactor.from_config(config))
    root = logging.getLogger()
    path = None
    if to_file:
        path = config.home / "logs" / "augure.log"
        _replace(root, FILE_HANDLER)
        try:
            path.parent.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
            tighten(path.parent, PRIVATE_FOLDER)
            # Files left by a version that wrote them with the umask's mode.
            for earlier in path.parent.glob(f"{path.name}*"):
                tighten(earlier, PRIVATE_FILE)
            file = PrivateRotatingFileHandler(
                path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
            )
        except OSError as exc:
            raise HomeError(
                f"AUGURE_HOME {config.home} is not usable ({exc.strerror or exc}); "
                "point AUGURE_HOME at a writable folder"
            ) from None
        file.set_name(FILE_HANDLER)
        file.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(file)
    for handler in root.handlers:
        for old in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(old)
        handler.addFilter(redactor)
    return path


def private_rotating_handler(
    path: Path, max_bytes: int = MAX_BYTES, backups: int = BACKUPS
) -> RotatingFileHandler:
    """A log file rotated at `max_bytes`, keeping `backups` old files, each readable by the
    owner only (0600): a log may quote what a tool or a server printed."""
    tighten(path, PRIVATE_FILE)  # a file left by an older version keeps its mode otherwise
    return PrivateRotatingFileHandler(
        path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
    )


def _replace(root: logging.Logger, name: str) -> None:
    """Drop a handler installed by an earlier call in this process (tests call main twice)."""
    for handler in [h for h in root.handlers if h.get_name() == name]:
        root.removeHandler(handler)
        handler.close()
