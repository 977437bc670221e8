"""The folder's decisions (docs/telegram.md, "Follow-ups and albums"): when a batch goes,
what it holds, and that one failed turn does not stop the chat."""

from __future__ import annotations

import asyncio

import pytest

from augure.channels.telegram import fold
from augure.channels.telegram.fold import Content, Folder, _Part, merge_albums


class Answers:
    def __init__(self, fail_first: bool = False) -> None:
        self.batches: list[tuple[int, list[Content]]] = []
        self.spoken: list[bool] = []
        self.failures: list[tuple[int, str]] = []
        self.fail_first = fail_first
        self.done = asyncio.Event()

    async def answer(
        self, chat_id: int, contents: list[Content], spoken_in: bool, received: list[int]
    ) -> None:
        self.batches.append((chat_id, contents))
        self.spoken.append(spoken_in)
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
    await folder.close()
    assert answers.batches == [(7, ["first, typed", "[Voice note, transcribed]: and this, said"])]
    assert answers.spoken == [True]
    answers.done.clear()
    folder.add(7, "only typed")
    await asyncio.wait_for(answers.done.wait(), 5)
    await folder.close()
    assert answers.spoken == [True, False]
