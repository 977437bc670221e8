"""The history's token estimate, which decides when a conversation is compacted."""

from __future__ import annotations

import json
from typing import Any

from augure.agent.history import (
    MESSAGE_TOKENS,
    Conversation,
    Sizes,
    estimate_tokens,
    split_for_summary,
)


def chat(turns: int) -> list[dict[str, str]]:
    return [
        message
        for n in range(turns)
        for message in (
            {"role": "user", "content": f"message {n}"},
            {"role": "assistant", "content": "ok"},
        )
    ]


def test_each_message_costs_its_framing_as_well_as_its_text() -> None:
    # A provider bills every message's role and separators (about 3 tokens), so a long chat
    # of short messages is several times its text alone: without the framing it was never
    # compacted and every request carried the whole of it.
    messages = chat(1000)
    text_only = sum(len(m["content"]) for m in messages) // 4
    assert estimate_tokens(messages, None) == text_only + len(messages) * MESSAGE_TOKENS
    assert MESSAGE_TOKENS >= 3


def test_tool_calls_count_their_arguments() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}" * 200}}
    with_call = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    assert estimate_tokens(with_call) > 100


def test_the_recent_part_kept_whole_fits_the_budget_with_its_framing() -> None:
    messages = chat(400)
    older, recent = split_for_summary(messages, 500)
    assert older and recent[0]["role"] == "user"
    assert estimate_tokens(recent) <= 500 < estimate_tokens(messages[len(older) - 2 :])


def test_the_split_keeps_the_most_turns_that_fit() -> None:
    messages = chat(300)
    call = {"id": "c", "type": "function", "function": {"name": "x", "arguments": "{}"}}
    messages[401:401] = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "result " * 50},
    ]
    for budget in (50, 333, 900, 10_000):
        older, recent = split_for_summary(messages, budget)
        assert older + recent == messages
        assert recent[0]["role"] == "user"
        # Starting at the owner message before (never the very first) would not fit.
        earlier = [i for i, m in enumerate(older) if m["role"] == "user" and i > 0]
        if estimate_tokens(recent) <= budget and earlier:
            assert budget < estimate_tokens(messages[earlier[-1] :])


class CountingWords:
    """One token per word; counts the texts it was asked to encode."""

    def __init__(self) -> None:
        self.encoded = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.encoded += 1
        return [len(word) for word in text.split()]


def test_a_conversation_measures_each_message_once() -> None:
    # The history is estimated twice a turn; re-measuring all of it made a turn's CPU grow
    # with the conversation.
    words, sizes = CountingWords(), Sizes()
    messages = chat(50)
    first = estimate_tokens(messages, words, sizes)
    assert first == estimate_tokens(messages, words) and words.encoded == 2 * 100
    words.encoded = 0
    messages.append({"role": "user", "content": "one more"})
    assert estimate_tokens(messages, words, sizes) == first + 2 + MESSAGE_TOKENS
    assert words.encoded == 1


def test_the_remembered_sizes_follow_replaced_and_dropped_messages() -> None:
    sizes = Sizes()
    messages = chat(200)
    estimate_tokens(messages, None, sizes)
    messages[10] = {"role": "user", "content": "a much longer message than before " * 20}
    assert estimate_tokens(messages, None, sizes) == estimate_tokens(messages, None)
    for kept in (messages[150:], messages[:3], []):
        assert estimate_tokens(kept, None, sizes) == estimate_tokens(kept, None)
    # Sizes counted in characters are not mistaken for tokens when a tokenizer comes in.
    assert estimate_tokens(messages, CountingWords(), sizes) == estimate_tokens(
        messages, CountingWords()
    )


def test_loaded_tools_follow_the_history_as_it_grows_and_is_rewritten() -> None:
    def loading(*names: str) -> dict[str, Any]:
        arguments = json.dumps({"names": list(names)})
        call = {"id": "c", "type": "function", "function": {"name": "load_tools"}}
        call["function"]["arguments"] = arguments
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    conversation = Conversation(1, chat(3))
    assert conversation.loaded_tools() == set()
    conversation.messages.append(loading("browser"))
    assert conversation.loaded_tools() == {"browser"}
    conversation.messages += [*chat(2), loading("email", "github")]
    assert conversation.loaded_tools() == {"browser", "email", "github"}
    # A summary or a pruned mistake rewrites the history: what it dropped is not loaded.
    conversation.messages = [*chat(1), conversation.messages[-1]]
    assert conversation.loaded_tools() == {"email", "github"}
    conversation.messages = chat(1)
    assert conversation.loaded_tools() == set()
