"""The Telegram channel."""

import os
import sys

# Opt into python-telegram-bot's next behaviour (time periods as timedelta) now, so flood
# control errors do not warn on every 429; delivery handles both forms.
os.environ.setdefault("PTB_TIMEDELTA", "1")


def _import_telegram_without_passport_crypto() -> None:
    """python-telegram-bot imports `cryptography` whenever it is installed, only to decrypt
    Telegram Passport data, which Augure never requests. It is installed with the `github`
    extra (PyGithub needs PyJWT[crypto]) and then costs every start ~8 MB of memory and
    ~10 ms. While python-telegram-bot is imported, `cryptography` is marked unimportable (a
    None entry in sys.modules is Python's own mark), so it takes its "not installed" branch;
    the mark is removed at once, and the github tool imports the library on first use."""
    if "telegram" in sys.modules or "cryptography" in sys.modules:
        return  # too late, or already paid for by someone else
    sys.modules["cryptography"] = None  # type: ignore[assignment]
    try:
        import telegram  # noqa: F401
    finally:
        del sys.modules["cryptography"]


_import_telegram_without_passport_crypto()
