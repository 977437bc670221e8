from pathlib import Path

from augure.store.db import MIGRATIONS, Store, TurnUsage


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
