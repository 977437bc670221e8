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
    assert estimate_tokens(messages) == text_only + len(messages) * MESSAGE_TOKENS
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
