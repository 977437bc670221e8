import sqlite3
from pathlib import Path

import pytest

from augure.store.state import MIGRATIONS, Store, TurnUsage


async def test_migrations_wal_and_round_trip(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    assert await store.schema_version() == len(MIGRATIONS)
    assert (await store.db.fetchone("PRAGMA journal_mode"))[0] == "wal"
    conversation = await store.open_conversation("42")
    assert await store.open_conversation("42") == conversation
    image = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]
    call = {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    await store.add_messages(
        conversation,
        [
            {"role": "user", "content": image},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ],
    )
    await store.record_usage("42", conversation, TurnUsage("m", 10, 5, 1, {"memory": 1}))
    await store.close()

    reopened = await Store.open(tmp_path / "state.db")
    assert await reopened.open_conversation("42") == conversation
    messages = await reopened.messages(conversation)
    assert messages[0]["content"] == image
    assert messages[1]["tool_calls"] == [call]
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "done"}
    assert (await reopened.usage_totals("42"))["prompt_tokens"] == 10
    await reopened.close_conversation("42")
    assert await reopened.open_conversation("42") != conversation
    await reopened.close()


async def test_finishing_a_turn_stores_answer_usage_and_reply_all_or_nothing(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "state.db")
    conversation = await store.open_conversation("42")
    asked = {"role": "user", "content": "hi"}
    await store.begin_turn("t1", "42", "chat", conversation, asked)
    answer = {"role": "assistant", "content": "hello"}
    usage = TurnUsage("m", 10, 5, 1, {"memory": 1})
    await store.finish_turn(
        "t1",
        "hello",
        delivered=False,
        chat_id="42",
        conversation_id=conversation,
        messages=[answer],
        usage=usage,
    )
    assert await store.messages(conversation) == [asked, answer]
    assert (await store.usage_totals("42"))["prompt_tokens"] == 10
    [turn] = await store.open_turns()
    assert (turn["status"], turn["reply"]) == ("answered", "hello")

    # The reply's update fails (a trigger refuses it): the answer and usage go with it.
    await store.begin_turn("t2", "42", "chat", conversation, asked)
    await store.db.execute(
        "CREATE TRIGGER refuse BEFORE UPDATE ON turns BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(sqlite3.IntegrityError, match="refused"):
        await store.finish_turn(
            "t2",
            "again",
            delivered=True,
            chat_id="42",
            conversation_id=conversation,
            messages=[answer],
            usage=usage,
        )
    assert len(await store.messages(conversation)) == 3  # the two asks and one answer
    assert (await store.usage_totals("42"))["turns"] == 1
    await store.close()
