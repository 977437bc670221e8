"""Long polling that comes back quickly after a Bot API outage
(docs/reference/durability.md#outages: within 15 s).

python-telegram-bot 22's Updater retries a failed getUpdates after 1 s, then 1.5 times longer
after each further failure, up to 30 s (`telegram.ext._utils.networkloop`), and offers no
option to cap that. After a minute down, the next attempt can come 25-30 s after the API is
back. Here a failed long poll pauses at most RECONNECT_SECONDS itself and reports an empty
batch, so the Updater's loop sees a success and never grows its own wait.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from telegram import Update
from telegram.error import BadRequest, NetworkError, TimedOut
from telegram.ext import ExtBot

log = logging.getLogger(__name__)

FIRST_PAUSE_SECONDS = 0.5
RECONNECT_SECONDS = 5.0  # the longest pause between two attempts while the API is down


class PollingBot(ExtBot[None]):
    """An ExtBot whose long polls survive network errors and 5xx with a short, capped pause."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._failures = 0

    async def get_updates(self, *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        try:
            updates = await super().get_updates(*args, **kwargs)
        except (TimedOut, BadRequest):
            raise  # the Updater retries a timeout at once; a bad request is not an outage
        except NetworkError as exc:
            if not kwargs.get("timeout"):
                raise  # the last short poll at shutdown: nothing to wait for
            self._failures += 1
            if self._failures == 1:
                # A proxy's error page comes inside the error's text: the start says enough.
                log.warning("the Bot API cannot be reached (%.200s); retrying", exc)
            pause = min(FIRST_PAUSE_SECONDS * 2 ** (self._failures - 1), RECONNECT_SECONDS)
            await asyncio.sleep(pause)
            return ()
        if self._failures:
            log.info("the Bot API answers again after %d failed polls", self._failures)
            self._failures = 0
        return updates
