"""The folder's decisions (docs/telegram.md, "Follow-ups and albums"): when a batch goes,
what it holds, and that one failed turn does not stop the chat."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from augure.channels.telegram import fold
from augure.channels.telegram.fold import Folder, _Part, merge_albums
from augure.common.content import Content
from augure.config.settings import TelegramConfig, load_config
from augure.core.door.chat import ChatDesk
from augure.core.lifespan import Augure

PHOTO = [
    {"type": "text", "text": "a cat"},
    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
]


class Answers:
    def __init__(self, fail_first: bool = False) -> None:
        self.batches: list[tuple[int, list[Content]]] = []
        self.spoken: list[bool] = []
        self.received: list[list[int]] = []
        self.failures: list[tuple[int, str]] = []
        self.fail_first = fail_first
        self.done = asyncio.Event()

    async def answer(
        self, chat_id: int, contents: list[Content], spoken_in: bool, received: list[int]
    ) -> None:
        self.batches.append((chat_id, contents))
        self.spoken.append(spoken_in)
        self.received.append(received)
        self.done.set()
        if self.fail_first and len(self.batches) == 1:
            raise RuntimeError("the turn failed")

    async def failed(self, chat_id: int, error: BaseException) -> None:
        self.failures.append((chat_id, str(error)))


async def settled(folder: Folder) -> None:
    await asyncio.wait_for(folder.close(), 5)


def test_album_parts_become_one_message_and_other_messages_stay_apart() -> None:
    image = [{"type": "image_url", "image_url": {"url": "data:1"}}]
    merged = merge_albums(
        [
            _Part("hello", None),
            _Part([{"type": "text", "text": "first"}, *image], "A"),
            _Part([{"type": "text", "text": "second"}, *image], "A"),
            _Part("doc one", "B"),
            _Part("doc two", "B"),
            _Part("bye", None),
        ]
    )
    assert merged[0] == "hello" and merged[-1] == "bye"
    assert [part.get("text") for part in merged[1]] == ["first", None, "second", None]
    assert merged[2] == "doc one\n\ndoc two"
    assert len(merged) == 4


async def test_a_message_still_being_read_holds_the_batch_so_order_is_kept() -> None:
    answers = Answers()
    folder = Folder(answers.answer, answers.failed, fold_seconds=0)
    with folder.reading(1):
        folder.add(1, "first")
        await asyncio.sleep(0.2)  # a second message downloading: the first waits for it
        assert answers.batches == []
        folder.add(1, "second")
    await settled(folder)
    assert answers.batches == [(1, ["first", "second"])]


async def test_chats_are_answered_apart() -> None:
    answers = Answers()
    folder = Folder(answers.answer, answers.failed, fold_seconds=0)
    folder.add(1, "to one")
    folder.add(2, "to two")
    await settled(folder)
    assert sorted(answers.batches) == [(1, ["to one"]), (2, ["to two"])]


async def test_a_chat_that_keeps_writing_is_answered_within_the_longest_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fold, "LONGEST_WAIT_SECONDS", 0.5)
    answers = Answers()
    folder = Folder(answers.answer, answers.failed, fold_seconds=0.3)
    for n in range(15):  # one every 0.1 s: never a quiet 0.3 s in 1.5 s
        folder.add(1, f"m{n}")
        await asyncio.sleep(0.1)
    assert answers.done.is_set(), "the window held the batch past its longest wait"
    await settled(folder)
    answered = [content for _, batch in answers.batches for content in batch]
    assert answered == [f"m{n}" for n in range(15)]  # each once, in order


async def test_a_failed_turn_is_reported_and_the_next_batch_still_answered() -> None:
    answers = Answers(fail_first=True)
    folder = Folder(answers.answer, answers.failed, fold_seconds=0)
    folder.add(1, "breaks")
    await answers.done.wait()
    folder.add(1, "after")
    await settled(folder)
    assert answers.failures == [(1, "the turn failed")]
    assert answers.batches[-1] == (1, ["after"])


async def test_a_batch_holding_a_voice_note_says_so_for_a_spoken_answer() -> None:
    answers = Answers()
    folder = Folder(answers.answer, answers.failed, fold_seconds=0.2)
    folder.add(7, "first, typed")
    folder.add(7, "[Voice note, transcribed]: and this, said", spoken=True)
    await asyncio.wait_for(answers.done.wait(), 5)
    assert answers.batches == [(7, ["first, typed", "[Voice note, transcribed]: and this, said"])]
    assert answers.spoken == [True]
    answers.done.clear()
    folder.add(7, "only typed")
    await asyncio.wait_for(answers.done.wait(), 5)
    await folder.close()
    assert answers.spoken == [True, False]


# -- with the core's inbox (a real state.db, through the channel's verbs) ----------------


@contextlib.asynccontextmanager
async def inbox_of(home: Path) -> AsyncIterator[ChatDesk]:
    async with Augure.running(load_config(home=home)) as door:
        yield door.chat


async def test_a_start_hands_back_what_waited_one_batch_per_chat_in_order_without_a_window(
    tmp_path: Path,
) -> None:
    async with inbox_of(tmp_path) as before_the_crash:
        ids = [
            await before_the_crash.receive("1", "book a table"),
            await before_the_crash.receive("2", "other chat"),
            await before_the_crash.receive("1", PHOTO, "album"),
            await before_the_crash.receive("1", PHOTO, "album"),
            await before_the_crash.receive("1", "[Voice note, transcribed]: for four", spoken=True),
        ]
    answers = Answers()
    # A window far longer than the wait below: what waited is answered without one.
    folder = Folder(answers.answer, answers.failed, fold_seconds=60)
    async with inbox_of(tmp_path) as front:
        folder.inbox = front
        assert await folder.hand_back() == 5
        await asyncio.wait_for(folder.close(), 5)
    assert sorted(answers.batches, key=lambda batch: batch[0]) == [
        (1, ["book a table", [*PHOTO, *PHOTO], "[Voice note, transcribed]: for four"]),
        (2, ["other chat"]),
    ]
    assert sorted(answers.received) == [[ids[0], *ids[2:]], [ids[1]]]
    assert answers.spoken[[chat for chat, _ in answers.batches].index(1)] is True


async def test_a_batch_that_failed_before_its_turn_was_stored_is_not_answered_again(
    tmp_path: Path,
) -> None:
    answers = Answers(fail_first=True)
    folder = Folder(answers.answer, answers.failed, fold_seconds=0)
    async with inbox_of(tmp_path) as front:
        folder.inbox = front
        await folder.take(1, "breaks")
        await asyncio.wait_for(folder.close(), 5)
        assert answers.failures == [(1, "the turn failed")]  # the owner was told: its answer
        assert await front.waiting() == []


async def test_a_secret_in_a_message_is_masked_before_it_is_stored_to_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-unit-secret-value-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    async with inbox_of(tmp_path) as front:
        await front.receive("1", f"my key is {secret}")
        await front.receive("1", [{"type": "text", "text": f"caption {secret}"}])
        waiting = await front.waiting()
    assert len(waiting) == 2 and secret not in repr(waiting)
    assert secret.encode() not in (tmp_path / "state.db").read_bytes()


async def test_a_lone_message_starts_its_turn_before_any_timer_could_fire() -> None:
    """With the shipped settings nothing holds a lone message: its batch is answered after a
    few turns of the event loop, with no clock involved (a window of any length would need
    one)."""
    answers = Answers()
    folder = Folder(answers.answer, answers.failed, TelegramConfig().fold_seconds)
    with folder.reading(1):
        folder.add(1, "hello")
    for _ in range(10):
        await asyncio.sleep(0)  # yields to the loop; no timer can fire
    assert answers.batches == [(1, ["hello"])]
    await settled(folder)


async def test_what_arrives_during_a_turn_is_taken_into_it_once_and_not_answered_again() -> None:
    folder: Folder
    taken: list[tuple[list[Content], list[int]] | None] = []
    go_on = asyncio.Event()

    async def answer(
        chat_id: int, contents: list[Content], spoken_in: bool, received: list[int]
    ) -> None:
        answers.batches.append((chat_id, contents))
        await go_on.wait()  # the turn runs a tool; then, before its next model call:
        taken.append(folder.later(chat_id))
        taken.append(folder.later(chat_id))

    answers = Answers()
    folder = Folder(answer, answers.failed, fold_seconds=0)
    folder.add(1, "first")
    await asyncio.sleep(0.05)
    folder.add(1, "second")
    folder.add(1, "third")
    go_on.set()
    await settled(folder)
    assert answers.batches == [(1, ["first"])]  # no further turn for the taken ones
    assert taken == [(["second", "third"], []), None]


async def test_a_message_still_being_read_or_a_voice_note_is_left_for_the_next_turn() -> None:
    answers = Answers()
    folder = Folder(answers.answer, answers.failed, fold_seconds=0)
    chat = fold._Chat(parts=[_Part("said", None, spoken=True)])
    folder._chats[1] = chat
    assert folder.later(1) is None  # may be answered by voice: a turn of its own
    chat.parts = [_Part("typed", None)]
    chat.reading = 1
    assert folder.later(1) is None  # an earlier message still downloading keeps the order
    chat.reading = 0
    assert folder.later(1) == (["typed"], [])


async def test_a_stop_does_not_wait_out_a_window_and_leaves_the_batch_unanswered() -> None:
    """What waits for a window is in the inbox already: a stop leaves it to the next start
    rather than spend its few seconds waiting (or answer it early)."""
    answers = Answers()
    folder = Folder(answers.answer, answers.failed, fold_seconds=30)
    folder.add(1, "later")
    await asyncio.sleep(0.05)
    await settled(folder)  # well within the window
    assert answers.batches == []
