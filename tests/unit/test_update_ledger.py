"""The offset Telegram is sent (docs/reference/durability.md, "Updates Telegram resends"):
never past an update still being handled, and Telegram's resends of such an update never
dispatched twice."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from telegram import Update

from augure.channels.telegram.ledger import UpdateLedger, delivery
from augure.store.inbox import Inbox
from augure.store.state import Store


def updates(*ids: int) -> tuple[Update, ...]:
    return tuple(Update(update_id=n) for n in ids)


def ids(batch: tuple[Update, ...]) -> list[int]:
    return [u.update_id for u in batch]


async def test_the_offset_is_held_at_the_lowest_update_not_yet_settled() -> None:
    ledger = UpdateLedger()
    assert ledger.offset(0) == 0  # the first poll confirms nothing
    assert ids(ledger.fresh(updates(5, 6, 7), 0)) == [5, 6, 7]
    assert ledger.offset(8) == 5  # the Updater would confirm all three
    await ledger.settle(Update(update_id=6), record=False)
    assert ledger.offset(8) == 5  # 5 is still being handled
    await ledger.settle(Update(update_id=5), record=False)
    assert ledger.offset(8) == 7
    await ledger.settle(Update(update_id=7), record=False)
    assert ledger.offset(8) == 8


async def test_resent_updates_are_filtered_until_telegram_has_forgotten_them() -> None:
    ledger = UpdateLedger()
    ledger.fresh(updates(5, 6), 0)
    await ledger.settle(Update(update_id=6), record=False)
    sent = ledger.offset(7)
    assert sent == 5
    assert ids(ledger.fresh(updates(5, 6, 7), sent)) == [7]  # Telegram resends 5 and 6
    await ledger.settle(Update(update_id=5), record=False)
    await ledger.settle(Update(update_id=7), record=False)
    sent = ledger.offset(8)
    assert ids(ledger.fresh(updates(8), sent)) == [8]
    # Below the offset sent, an id is forgotten here too, as Telegram forgets it.
    assert ids(ledger.fresh(updates(5), 9)) == [5]


async def test_a_poll_of_resends_only_waits_for_a_settle_instead_of_spinning() -> None:
    ledger = UpdateLedger()
    ledger.fresh(updates(5), 0)
    ledger.offset(6)
    waiting = asyncio.create_task(ledger.until_settled(60))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    await ledger.settle(Update(update_id=5), record=False)
    await asyncio.wait_for(waiting, 5)  # woken by the settle, not by the 60 s bound


def test_a_resend_is_the_same_delivery_and_a_reused_id_is_not() -> None:
    from telegram import Chat, Message, User

    def message(text: str) -> Update:
        chat = Chat(id=7, type="private")
        sent = Message(
            1, datetime.fromtimestamp(0, UTC), chat, from_user=User(7, "o", False), text=text
        )
        return Update(update_id=5, message=sent)

    assert delivery(message("hello")) == delivery(message("hello"))  # Telegram's resend
    assert delivery(message("hello"))[0] == delivery(message("other"))[0] == 5
    assert delivery(message("hello")) != delivery(message("other"))  # a new count's update 5


async def test_parked_updates_let_the_offset_pass_and_come_back_until_taken(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "state.db")
    try:
        front = Inbox(store.db)
        ledger = UpdateLedger()
        await ledger.open(front)
        ledger.fresh(updates(5, 6, 7), 0)
        await ledger.settle(Update(update_id=6))
        assert ledger.offset(8) == 5
        await ledger.park()  # 5 and 7 are still being handled: kept in state.db
        assert ledger.offset(8) == 8  # Telegram may forget them now
        await ledger.settle(Update(update_id=5))  # taken: its parked copy goes with it

        # A kill here: the next run gets 7 back from state.db, not from Telegram.
        later = UpdateLedger()
        await later.open(front)
        assert ids(tuple(await later.unparked(cast(Any, None)))) == [7]
        assert later.offset(9) == 9  # it is parked still: the offset is not held for it
        await later.settle(Update(update_id=7))
        again = UpdateLedger()
        await again.open(front)
        assert await again.unparked(cast(Any, None)) == []
    finally:
        await store.close()


def message_update(update_id: int, **content: Any) -> Update:
    when = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())
    body = {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": when,
            "chat": {"id": 1, "type": "private"},
            **content,
        },
    }
    return cast(Update, Update.de_json(body, None))


async def waited(ledger: UpdateLedger, requested: int, settle: Update | None) -> bool:
    """Whether `until_stored` waited for `settle` (settled 50 ms in) rather than returning."""

    async def later() -> None:
        await asyncio.sleep(0.05)
        if settle is not None:
            await ledger.settle(settle, record=False)

    settling = asyncio.create_task(later())
    await ledger.until_stored(requested, 5.0)
    done = settling.done()
    await settling
    return done


async def test_the_next_poll_waits_for_one_text_message_to_be_stored() -> None:
    ledger = UpdateLedger()
    text = message_update(5, text="hello")
    ledger.fresh((text,), 0)
    assert await waited(ledger, 6, text)
    assert ledger.offset(6) == 6  # the poll then confirms it: Telegram sends it no more


async def test_a_voice_note_a_burst_or_nothing_held_sends_the_poll_at_once() -> None:
    ledger = UpdateLedger()
    voice = message_update(5, voice={"file_id": "v", "file_unique_id": "v", "duration": 3})
    ledger.fresh((voice,), 0)
    assert not await waited(ledger, 6, voice)  # heard for seconds: other chats come first

    ledger = UpdateLedger()
    burst = (message_update(5, text="a"), message_update(6, text="b"))
    ledger.fresh(burst, 0)
    assert not await waited(ledger, 7, burst[0])  # more are likely behind: take them in

    assert not await waited(UpdateLedger(), 7, None)
