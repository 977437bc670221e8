"""The inbox of messages waiting to be answered (docs/reference/durability.md, "Messages
waiting to be folded"): a message is waiting or in the history with its turn, never both,
never neither."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from augure.store.inbox import KEEP_TAKEN_SECONDS, AlreadyAnswered, Inbox
from augure.store.state import Store

PHOTO = [
    {"type": "text", "text": "a cat"},
    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    store = await Store.open(tmp_path / "state.db")
    yield store
    await store.close()


async def history(store: Store, chat_id: str) -> list[object]:
    conversation = await store.open_conversation(chat_id)
    return [message["content"] for message in await store.messages(conversation)]


async def turns(store: Store) -> int:
    row = await store.db.fetchone("SELECT count(*) FROM turns")
    assert row is not None
    return int(row[0])


async def test_waiting_messages_come_back_in_arrival_order_as_they_were_taken_in(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "state.db")
    inbox = Inbox(store.db)
    first = await inbox.receive("7", "hello")
    second = await inbox.receive("8", PHOTO, "album-1")
    third = await inbox.receive("7", "[Voice note, transcribed]: hi", spoken=True)
    await store.close()  # as a crash would leave it: the rows are all there is

    reopened = await Store.open(tmp_path / "state.db")
    waiting = await Inbox(reopened.db).waiting()
    await reopened.close()
    assert [m.id for m in waiting] == [first, second, third] and first < second < third
    assert [m.chat_id for m in waiting] == ["7", "8", "7"]
    assert waiting[0].content == "hello" and waiting[1].content == PHOTO
    assert [m.album for m in waiting] == [None, "album-1", None]
    assert [m.spoken for m in waiting] == [False, False, True]


async def test_a_batch_leaves_the_inbox_in_the_transaction_that_stores_its_turn(
    store: Store,
) -> None:
    inbox = Inbox(store.db)
    ids = [await inbox.receive("7", "book a table"), await inbox.receive("7", "for four")]
    kept = await inbox.receive("8", "another chat's")
    conversation = await store.open_conversation("7")
    asked = [{"role": "user", "content": "book a table"}, {"role": "user", "content": "for four"}]

    await store.begin_turn("t1", "7", "chat", conversation, *asked, received=ids)

    assert [m.id for m in await inbox.waiting()] == [kept]
    assert await history(store, "7") == ["book a table", "for four"]
    assert await turns(store) == 1


async def test_a_failure_inside_begin_turn_leaves_the_batch_waiting_and_nothing_stored(
    store: Store,
) -> None:
    inbox = Inbox(store.db)
    conversation = await store.open_conversation("7")
    await store.begin_turn("t1", "7", "chat", conversation, {"role": "user", "content": "a"})
    waiting = await inbox.receive("7", "b")

    # The same turn id again: the insert fails after the inbox row was deleted in the same
    # transaction, which must roll back with it.
    with pytest.raises(sqlite3.IntegrityError):
        b = {"role": "user", "content": "b"}
        await store.begin_turn("t1", "7", "chat", conversation, b, received=[waiting])

    assert [m.id for m in await inbox.waiting()] == [waiting]
    assert await history(store, "7") == ["a"]
    assert await turns(store) == 1


async def test_a_batch_already_taken_by_a_turn_is_not_begun_again(store: Store) -> None:
    inbox = Inbox(store.db)
    taken = await inbox.receive("7", "once")
    conversation = await store.open_conversation("7")
    once = {"role": "user", "content": "once"}
    await store.begin_turn("t1", "7", "chat", conversation, once, received=[taken])

    with pytest.raises(AlreadyAnswered):
        await store.begin_turn("t2", "7", "chat", conversation, once, received=[taken])

    assert await history(store, "7") == ["once"]
    assert await turns(store) == 1


async def test_a_dismissed_batch_is_no_longer_waiting_and_dismissing_twice_is_harmless(
    store: Store,
) -> None:
    inbox = Inbox(store.db)
    failed = [await inbox.receive("7", "x"), await inbox.receive("7", "y")]
    later = await inbox.receive("7", "z")
    await inbox.dismiss(failed)
    await inbox.dismiss(failed)
    assert [m.id for m in await inbox.waiting()] == [later]


async def test_ids_are_never_reused_so_an_old_batch_cannot_take_a_new_message(
    store: Store,
) -> None:
    inbox = Inbox(store.db)
    old = await inbox.receive("7", "old")
    await inbox.dismiss([old])
    assert await inbox.receive("7", "new") != old


async def test_an_update_is_recorded_taken_with_its_message_and_forgotten_after_two_days(
    store: Store,
) -> None:
    inbox = Inbox(store.db)
    await inbox.receive("7", "hello", delivery=(41, "a"))
    await inbox.record_update((42, "b"))  # a command: nothing stored but the id
    await inbox.record_update((42, "b"))  # settled twice (a resend skipped): still one row
    await inbox.record_update((42, "c"))  # another update under a reused id: its own row
    assert await inbox.taken_updates() == {(41, "a"), (42, "b"), (42, "c")}

    old = time.time() - KEEP_TAKEN_SECONDS - 60
    await store.db.write(lambda c: c.execute("UPDATE taken_updates SET taken_at = ?", (old,)))
    await inbox.record_update((43, "d"))
    assert await inbox.taken_updates() == {(43, "d")}


async def test_a_message_that_fails_to_store_leaves_its_update_untaken(store: Store) -> None:
    inbox = Inbox(store.db)
    with pytest.raises(sqlite3.Error):  # the row cannot be stored: neither is the update
        await inbox.receive("7", "hello", object(), delivery=(50, "e"))  # type: ignore[arg-type]
    assert await inbox.taken_updates() == set()
