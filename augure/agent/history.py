"""Conversation history as the model sees it, loaded from and saved to the store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from augure.store.db import Store

INTERRUPTED = "Error: this call was interrupted (the assistant restarted) and did not complete."


@dataclass
class Conversation:
    id: int
    messages: list[dict[str, Any]] = field(default_factory=list)


async def load(store: Store, chat_id: str) -> Conversation:
    conversation_id = await store.open_conversation(chat_id)
    return Conversation(conversation_id, repair(await store.messages(conversation_id)))


def repair(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every tool call a result, so a crash mid-turn cannot poison the next request."""
    repaired: list[dict[str, Any]] = []
    waiting: list[str] = []
    for message in messages:
        if message["role"] != "tool" and waiting:
            repaired += [
                {"role": "tool", "tool_call_id": i, "content": INTERRUPTED} for i in waiting
            ]
            waiting = []
        if message["role"] == "tool":
            if message.get("tool_call_id") not in waiting:
                continue  # an orphan result: the API refuses it
            waiting.remove(message["tool_call_id"])
        repaired.append(message)
        if message["role"] == "assistant":
            waiting = [call["id"] for call in message.get("tool_calls") or []]
    repaired += [{"role": "tool", "tool_call_id": i, "content": INTERRUPTED} for i in waiting]
    return repaired
