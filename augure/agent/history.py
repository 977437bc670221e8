"""Conversation history as the model sees it, loaded from and saved to the store."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from augure.store.db import Store

INTERRUPTED = "Error: this call was interrupted (the assistant restarted) and did not complete."


@dataclass
class Conversation:
    id: int
    messages: list[dict[str, Any]] = field(default_factory=list)

    def loaded_tools(self) -> set[str]:
        """Deferred tools the model loaded earlier in this conversation."""
        names: set[str] = set()
        for message in self.messages:
            for call in message.get("tool_calls") or []:
                if call["function"]["name"] == "load_tools":
                    try:
                        names.update(json.loads(call["function"]["arguments"]).get("names", []))
                    except (ValueError, AttributeError, TypeError):
                        continue
        return names


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


def prune(messages: list[dict[str, Any]], call_ids: set[str]) -> list[dict[str, Any]]:
    """Drop the given tool calls and their results; an assistant message left empty goes too."""
    kept: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "tool" and message.get("tool_call_id") in call_ids:
            continue
        calls = message.get("tool_calls")
        if calls:
            remaining = [call for call in calls if call["id"] not in call_ids]
            if not remaining and not message.get("content"):
                continue
            message = (
                {**message, "tool_calls": remaining}
                if remaining
                else {key: value for key, value in message.items() if key != "tool_calls"}
            )
        kept.append(message)
    return kept
