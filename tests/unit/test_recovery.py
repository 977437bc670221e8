"""Recovery's bookkeeping: each notice once, a failed notice tried again at the next start."""

from __future__ import annotations

from pathlib import Path

from augure.approval.gate import ApprovalGate
from augure.common.ports import NOT_KNOWN, Sources
from augure.core.recovery import INTERRUPTED_NOTE, INTERRUPTED_UNSEEN, recover
from augure.store.audit import Audit
from augure.store.state import Store


class Notices:
    """The channel side, recording what it was asked to show."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.sent: list[tuple[str, str]] = []
        self.finalized: list[tuple[str, int, str]] = []

    async def send(self, chat_id: str, markdown: str, sources: Sources = NOT_KNOWN) -> None:
        if self.fail:
            raise ConnectionError("Bot API unreachable")
        self.sent.append((chat_id, markdown))

    async def edit(self, chat_id: str, message_id: int, markdown: str) -> None:
        if self.fail:
            raise ConnectionError("Bot API unreachable")
        self.finalized.append((chat_id, message_id, markdown))


async def crashed_store(tmp_path: Path) -> Store:
    store = await Store.open(tmp_path / "state.db")
    conversation = await store.open_conversation("5")
    message = {"role": "user", "content": "hi"}
    await store.begin_turn("unsent", "5", "chat", conversation, message)
    await store.turn_answered("unsent", "The full answer.", delivered=False)
    await store.begin_turn("streaming", "5", "chat", conversation, message)
    await store.turn_preview("streaming", 77, "Half of it")
    await store.begin_turn("silent", "5", "chat", conversation, message)
    await store.begin_turn("job", "job:x", "job", conversation, message)
    await store.begin_turn("finished", "5", "chat", conversation, message)
    await store.turn_answered("finished", "ok", delivered=True)
    return store


async def test_each_cut_off_turn_is_settled_once(tmp_path: Path) -> None:
    store = await crashed_store(tmp_path)
    audit = Audit(store)
    gate = ApprovalGate(audit, 5)
    notices = Notices()
    done = await recover(store, audit, gate, notices)
    assert (done.replies_delivered, done.turns_interrupted) == (1, 2)
    assert notices.sent == [("5", "The full answer."), ("5", INTERRUPTED_UNSEEN)]
    ((chat, message_id, text),) = notices.finalized
    assert (chat, message_id) == ("5", 77) and text.startswith("Half of it")
    assert INTERRUPTED_NOTE in text

    again = Notices()
    await recover(store, audit, gate, again)
    assert again.sent == [] and again.finalized == []
    assert await store.open_turns() == []
    await store.close()


async def test_a_notice_that_could_not_be_sent_is_tried_at_the_next_start(tmp_path: Path) -> None:
    store = await crashed_store(tmp_path)
    audit = Audit(store)
    gate = ApprovalGate(audit, 5)
    await recover(store, audit, gate, Notices(fail=True))
    later = Notices()
    done = await recover(store, audit, gate, later)
    assert (done.replies_delivered, done.turns_interrupted) == (1, 2)
    assert ("5", "The full answer.") in later.sent and len(later.finalized) == 1
    await store.close()
