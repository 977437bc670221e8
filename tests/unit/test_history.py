"""The history's token estimate, which decides when a conversation is compacted."""

from __future__ import annotations

from augure.agent.history import MESSAGE_TOKENS, estimate_tokens, split_for_summary


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
