"""What an answer sounds like (augure/llm/speech.py): Markdown read aloud without its marks,
in parts the speech endpoint takes, and real WAV turned into OGG/Opus by opusenc."""

from __future__ import annotations

import pytest

from augure.llm.speech import MAX_PARTS, PART_CHARS, THE_REST, is_ogg_opus, speakable, to_ogg_opus
from tests.fakes.audio import wav


def test_marks_links_and_code_are_not_read_aloud() -> None:
    markdown = (
        "## Plan\n\n- **Call** the [bank](https://bank.example/help)\n"
        "- see https://x.example/a\n\n```python\nprint('hi')\n```\nDone."
    )
    (part,) = speakable(markdown)
    assert part == "Plan\n\nCall the bank\nsee \n\n (code in the text) \nDone."


def test_a_long_answer_is_cut_on_sentences_into_at_most_three_parts() -> None:
    sentence = "The plan has many careful steps to follow. "
    parts = speakable(sentence * 400)  # about 17,000 characters
    assert len(parts) == MAX_PARTS
    assert all(len(part) <= PART_CHARS + len(THE_REST) + 1 for part in parts)
    assert all(part.rstrip(". " + THE_REST).endswith("follow") for part in parts)
    assert parts[-1].endswith(THE_REST)
    assert speakable("Short.") == ["Short."] and speakable("```\ncode only") != []


@pytest.mark.system_package("opus-tools")
async def test_wav_becomes_ogg_opus() -> None:
    converted = await to_ogg_opus(wav(seconds=0.5))
    assert is_ogg_opus(converted) and b"OpusHead" in converted[:80]
