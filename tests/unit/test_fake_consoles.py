"""The hand-usable parts of the fakes' command lines (docs/development.md): the model's script
lines and echo, and which button a typed word presses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_cli import ScriptError, echo, read_script
from tests.fakes.telegram_cli import chosen

APPROVAL = [("Approve", "ap:1:y"), ("Reject", "ap:1:n"), ("Always allow", "ap:1:a")]


def test_script_lines_become_text_tool_call_and_error_replies(tmp_path: Path) -> None:
    script = tmp_path / "script.txt"
    script.write_text(
        "# skipped\n\nplain words\n"
        '{"text": "as json"}\n'
        '{"tool": "http", "arguments": {"method": "GET", "url": "https://example.com"}}\n'
        '{"tools": [{"tool": "a"}, {"tool": "b", "arguments": {"x": 1}}], "text": "two"}\n'
        '{"error": 429, "message": "slow down"}\n'
        "[1, 2]\n",
        encoding="utf-8",
    )
    replies = read_script(script)
    assert [r.text for r in replies] == ["plain words", "as json", None, "two", None, "[1, 2]"]
    assert [(c.name, c.arguments) for c in replies[2].tool_calls] == [
        ("http", {"method": "GET", "url": "https://example.com"})
    ]
    assert [(c.name, c.arguments) for c in replies[3].tool_calls] == [("a", {}), ("b", {"x": 1})]
    assert (replies[4].status, replies[4].error_message) == (429, "slow down")


def test_a_json_line_that_says_no_reply_kind_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "script.txt"
    script.write_text('{"txt": "typo"}\n', encoding="utf-8")
    with pytest.raises(ScriptError, match="typo"):
        read_script(script)


def test_echo_gives_back_the_last_message_or_the_tool_result() -> None:
    user = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}
    assert echo(user).text == "echo: hi"
    ran = {"messages": [*user["messages"], {"role": "tool", "content": "42"}]}
    assert echo(ran).text == "tool said: 42"


@pytest.mark.parametrize(
    ("word", "data"),
    [("approve", "ap:1:y"), ("REJ", "ap:1:n"), ("always", "ap:1:a"), ("2", "ap:1:n")],
)
def test_a_typed_word_presses_the_button_it_starts_or_numbers(word: str, data: str) -> None:
    assert chosen(APPROVAL, word) == data


@pytest.mark.parametrize("word", ["4", "0", "allow", "x"])
def test_a_word_that_names_no_button_presses_none(word: str) -> None:
    assert chosen(APPROVAL, word) is None
