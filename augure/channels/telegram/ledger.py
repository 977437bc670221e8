"""Which updates Telegram may forget (docs/reference/durability.md, "Updates Telegram resends").

Telegram forgets every update below the offset of the next getUpdates. python-telegram-bot
moves that offset past an update as soon as it has fetched it, while the handler may still be
downloading a photo or transcribing a voice note: a kill in that window would lose the
message. So the offset is held at the lowest update handed out and not yet settled (its
handlers have all returned: the message is in the inbox, or answered), and Telegram sends the
held updates again with each poll until then; those are filtered out, so none is dispatched
twice in one run.

Across runs, an update settled just before a kill is sent again by Telegram, which was never
told. Settled update ids are kept in state.db (written with the inbox row when the update
carried a message) and an update a previous run took is skipped.

Telegram hands out at most 100 updates from the offset: behind one slow update (a voice note
being heard) and 99 more, every newer update (a button press, another chat) would stay out of
sight. When a poll's whole batch is updates already handed out, those still being handled
are parked in state.db, whole, and the offset moves past them; each leaves the table in the
transaction that records it taken, and a start hands the bot what a kill left there.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Sequence

from telegram import Bot, Update

from augure.core.door.chat import Deliveries

log = logging.getLogger(__name__)


def _body(update: Update) -> str:
    return json.dumps(update.to_dict(), sort_keys=True, default=str)


def _stored_at_once(update: Update) -> bool:
    """A plain text message: its handler only writes its inbox row (no download, no
    transcription)."""
    message = update.message
    return message is not None and message.text is not None


def delivery(update: Update) -> tuple[int, str]:
    """The update's id and a digest of its content: Telegram's resend of an update is the
    same pair; another update under a reused id (a new count after a week's silence, another
    bot token) is not."""
    return update.update_id, hashlib.sha256(_body(update).encode()).hexdigest()[:32]


class UpdateLedger:
    """The updates handed out in this run and not yet settled, and those earlier runs took."""

    def __init__(self) -> None:
        self._unsettled: set[int] = set()
        self._handed_out: set[int] = set()  # at or above the last offset sent
        self._taken_before: set[tuple[int, str]] = set()
        self._recorded: set[int] = set()  # stored with their inbox row already
        self._held: dict[int, Update] = {}  # unsettled, by id: what parking writes
        self._parked: set[int] = set()  # unsettled, but kept in state.db: the offset may pass
        # Each unsettled update's `delivery`, worked out once: its digest reads the whole
        # update (python-telegram-bot's to_dict), the costliest step of taking a message in.
        self._deliveries: dict[int, tuple[int, str]] = {}
        self._settled = asyncio.Event()
        self._idle = asyncio.Event()  # set while no update is being handled
        self._idle.set()
        self._inbox: Deliveries | None = None

    async def open(self, deliveries: Deliveries) -> None:
        """Before the first poll: what earlier runs took, so Telegram's resends are skipped."""
        self._inbox = deliveries
        self._taken_before = await deliveries.taken_updates()

    # -- the polling side ------------------------------------------------------------------

    def offset(self, requested: int | None) -> int | None:
        """The offset to send: never past an update still being handled, unless parked."""
        self._settled.clear()
        holding = self._holding(requested)
        return min(requested, min(holding)) if holding and requested is not None else requested

    async def until_stored(self, requested: int | None, seconds: float) -> None:
        """Before a poll the offset would hold back for one text message being stored: it is
        in the inbox within moments, and Telegram would answer such a poll at once with it
        again. Waiting those moments (at most `seconds`) spares the round trip and the parse.
        A voice note or a file may take seconds, and several messages are likely a burst
        with more behind them: the poll goes at once, so what follows is taken in while the
        first turns run and folded into fewer of them."""
        holding = self._holding(requested)
        if len(holding) != 1 or not _stored_at_once(self._held[min(holding)]):
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), seconds)

    def _holding(self, requested: int | None) -> set[int]:
        """The updates still being handled that an offset of `requested` would let go."""
        if requested is None or requested <= 0:
            return set()
        return {n for n in self._unsettled - self._parked if n < requested}

    def fresh(self, updates: Sequence[Update], sent: int | None) -> tuple[Update, ...]:
        """What a poll Telegram answered returned, less the updates already handed out in
        this run. (Only an answered poll: one lost on the way confirmed nothing.)"""
        if sent is not None and sent > 0:
            # Telegram never sends again what is below the offset it was given.
            self._handed_out = {n for n in self._handed_out if n >= sent}
        fresh = tuple(u for u in updates if u.update_id not in self._handed_out)
        for update in fresh:
            self._handed_out.add(update.update_id)
            self._unsettled.add(update.update_id)
            self._held[update.update_id] = update
        if self._unsettled - self._parked:
            self._idle.clear()
        return fresh

    async def park(self) -> None:
        """A poll's whole batch was updates already handed out: Telegram sends no newer one
        until the offset passes those still being handled, so they are kept in state.db,
        whole, and the offset may pass them."""
        waiting = [u for n, u in sorted(self._held.items()) if n not in self._parked]
        if not waiting or self._inbox is None:
            return
        try:
            await self._inbox.park([(self.delivery_of(u), _body(u)) for u in waiting])
        except Exception:  # not parked: the offset stays held, nothing is lost
            log.exception("could not park %d updates still being handled", len(waiting))
            return
        self._parked.update(u.update_id for u in waiting)
        if not self._unsettled - self._parked:
            self._idle.set()
        log.info("parked %d updates still being handled", len(waiting))

    async def unparked(self, bot: Bot) -> list[Update]:
        """At start, the updates a previous run parked and did not take: handed out again,
        as Telegram will not send them."""
        assert self._inbox is not None, "opened first"
        updates = [Update.de_json(json.loads(body), bot) for body in await self._inbox.parked()]
        for update in updates:
            self._unsettled.add(update.update_id)
            self._held[update.update_id] = update
            self._parked.add(update.update_id)
        return updates

    async def until_settled(self, seconds: float) -> None:
        """A poll brought back only updates still being handled: Telegram answers such a poll
        at once, so the next waits for one to settle (or `seconds`) rather than spin."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), seconds)

    # -- the handling side -----------------------------------------------------------------

    def delivery_of(self, update: Update) -> tuple[int, str]:
        """`delivery(update)` for an update being handled."""
        known = self._deliveries.get(update.update_id)
        if known is None:
            known = self._deliveries[update.update_id] = delivery(update)
        return known

    def taken_before(self, update: Update) -> bool:
        return bool(self._taken_before) and self.delivery_of(update) in self._taken_before

    def recorded(self, update_id: int) -> None:
        """The update's message is in the inbox, its id with it: nothing left to record."""
        self._recorded.add(update_id)

    async def settle(self, update: Update, *, record: bool = True) -> None:
        """Every handler of the update has returned: Telegram may forget it."""
        update_id = update.update_id
        try:
            if record and update_id not in self._recorded and self._inbox is not None:
                await self._inbox.record_update(self.delivery_of(update))
        except Exception:  # Telegram may send it again after a restart: answered twice at worst
            log.exception("could not record that update %d was handled", update_id)
        finally:
            self._recorded.discard(update_id)
            taken = self._deliveries.pop(update_id, None)
            if taken is not None:
                self._taken_before.discard(taken)
            self._unsettled.discard(update_id)
            self._held.pop(update_id, None)
            self._parked.discard(update_id)
            self._settled.set()
            if not self._unsettled - self._parked:
                self._idle.set()
