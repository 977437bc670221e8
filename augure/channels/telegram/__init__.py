"""The Telegram channel."""

import os

# Opt into python-telegram-bot's next behaviour (time periods as timedelta) now, so flood
# control errors do not warn on every 429; delivery handles both forms.
os.environ.setdefault("PTB_TIMEDELTA", "1")
