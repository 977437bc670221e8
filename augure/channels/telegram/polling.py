"""Long polling that comes back quickly after a Bot API outage
(docs/reference/durability.md#outages: within 15 s).

python-telegram-bot 22's Updater retries a failed getUpdates after 1 s, then 1.5 times longer
after each further failure, up to 30 s (`telegram.ext._utils.networkloop`), and offers no
option to cap that. After a minute down, the next attempt can come 25-30 s after the API is
back. Here a failed long poll pauses at most RECONNECT_SECONDS itself and reports an empty
batch, so the Updater's loop sees a success and never grows its own wait.

The offset each poll confirms is held back until the updates it covers are settled
(augure.channels.telegram.ledger): `SettlingApplication` settles an update once its handlers
have all returned.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from telegram import Update
from telegram.error import BadRequest, NetworkError, TimedOut
from telegram.ext import Application, ExtBot

from augure.channels.telegram.ledger import UpdateLedger

log = logging.getLogger(__name__)

FIRST_PAUSE_SECONDS = 0.5
RECONNECT_SECONDS = 5.0  # the longest pause between two attempts while the API is down
# While an update is being handled, a poll returns it again at once: the next poll waits at
# most this long for it to settle (a new message meanwhile comes at most this late).
RESENT_PAUSE_SECONDS = 1.0
# The most updates one getUpdates returns: a batch this full may hide newer ones.
FULL_BATCH = 100


class PollingBot(ExtBot[None]):
    """An ExtBot whose long polls survive network errors and 5xx with a short, capped pause."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._failures = 0
        self._ledger = UpdateLedger()  # a Bot's public attributes are frozen after init

    @property
    def ledger(self) -> UpdateLedger:
        return self._ledger

    async def get_updates(self, *args: Any, **kwargs: Any) -> tuple[Update, ...]:
        # The Updater passes `offset` by keyword, the shutdown's last poll included.
        if kwargs.get("timeout"):
            await self.ledger.until_stored(kwargs.get("offset"), RESENT_PAUSE_SECONDS)
        offset = kwargs["offset"] = self.ledger.offset(kwargs.get("offset"))
        updates = await self._poll(*args, **kwargs)
        if updates is None:
            return ()  # the offset may not have reached Telegram: nothing is forgotten
        fresh = self.ledger.fresh(updates, offset)
        if updates and not fresh and kwargs.get("timeout"):
            if len(updates) >= (kwargs.get("limit") or FULL_BATCH):
                await self.ledger.park()  # newer updates wait behind these: let them through
            else:
                await self.ledger.until_settled(RESENT_PAUSE_SECONDS)
        return fresh

    async def _poll(self, *args: Any, **kwargs: Any) -> tuple[Update, ...] | None:
        """The updates, or None after an outage's capped pause."""
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
            return None
        if self._failures:
            log.info("the Bot API answers again after %d failed polls", self._failures)
            self._failures = 0
        return updates


class SettlingApplication(Application[Any, Any, Any, Any, Any, Any]):
    """An Application that tells its bot's ledger when an update is settled. With handlers
    that block (the default, and every handler here), `process_update` returns only once
    each handler group is done, its error handler included, even with concurrent updates."""

    async def process_update(self, update: object) -> None:
        ledger = self.bot.ledger if isinstance(self.bot, PollingBot) else None
        if ledger is None or not isinstance(update, Update):
            await super().process_update(update)
            return
        if ledger.taken_before(update):
            log.info("update %d was taken before a restart; skipped", update.update_id)
            await ledger.settle(update, record=False)
            return
        try:
            await super().process_update(update)
        except asyncio.CancelledError:
            raise  # cut short at a stop: left unsettled, so Telegram sends it again
        except Exception:
            await ledger.settle(update)
            raise
        await ledger.settle(update)
