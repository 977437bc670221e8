"""The Telegram channel."""

import os

from augure.common.import_guard import importing_without

# Opt into python-telegram-bot's next behaviour (time periods as timedelta) now, so flood
# control errors do not warn on every 429; delivery handles both forms.
os.environ.setdefault("PTB_TIMEDELTA", "1")

# python-telegram-bot imports `cryptography`, when installed (the github extra brings it),
# only to decrypt Telegram Passport data, which Augure never requests: memory and time;
# and APScheduler's scheduler and executors for its JobQueue, which Augure turns off
# (`job_queue(None)`; it runs its own scheduler on APScheduler's triggers): time again.
with importing_without("cryptography", "apscheduler.executors", "apscheduler.schedulers"):
    import telegram
    import telegram.ext  # noqa: F401
