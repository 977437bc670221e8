"""Token counts: a tokenizer handed in is what counts; without one, or when it cannot load,
the ~4 characters a token estimate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from augure.agent import tokens
from augure.agent.history import MESSAGE_TOKENS, estimate_tokens
from augure.agent.tally import Tally


class WordEncoding:
    """A tiny tokenizer: one token per word. Records what it was asked to count."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.seen.append(text)
        return [len(word) for word in text.split()]


MESSAGES = [
    {"role": "user", "content": "please count these five words"},
    {"role": "assistant", "content": "x" * 400},
]


def test_the_tokenizer_counts_when_one_is_given() -> None:
    words = WordEncoding()
    assert tokens.count("three short words", words) == 3
    assert estimate_tokens(MESSAGES, words) == 5 + 1 + 2 * MESSAGE_TOKENS
    assert "please count these five words" in words.seen


def test_without_a_tokenizer_four_characters_make_a_token() -> None:
    assert tokens.count("abcdefgh", None) == 2
    chars = len("please count these five words") + 400
    assert estimate_tokens(MESSAGES, None) == chars // 4 + 2 * MESSAGE_TOKENS


def test_tool_calls_are_counted_too() -> None:
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "a b c"}]}
    words = WordEncoding()
    assert estimate_tokens([call], words) > MESSAGE_TOKENS + 1
    assert any('"c1"' in seen for seen in words.seen)


def test_the_usage_split_uses_the_tokenizer() -> None:
    usage = Tally().usage(
        "m",
        system="one two three four memory memory",
        memory_chars=len("memory memory"),
        schemas=[{"name": "tool"}],
        output="the answer",
        messages=MESSAGES,
        encoding=WordEncoding(),
    )
    breakdown = usage.breakdown
    assert breakdown["system_prompt"] + breakdown["memory"] == 6
    assert breakdown["memory"] == 6 * len("memory memory") // len(
        "one two three four memory memory"
    )
    assert breakdown["output"] == 2
    assert breakdown["history"] == 6 + 2 * MESSAGE_TOKENS


def test_a_loader_that_fails_means_the_estimate() -> None:
    def broken() -> tokens.Encoding:
        raise ConnectionError("no network to fetch o200k_base.tiktoken")

    assert tokens.load(broken) is None


def test_a_loader_that_hangs_means_the_estimate() -> None:
    release = threading.Event()

    def stuck() -> tokens.Encoding:
        release.wait()
        return WordEncoding()

    try:
        assert tokens.load(stuck, seconds=0.05) is None
    finally:
        release.set()


def test_a_loader_that_works_is_used() -> None:
    words = WordEncoding()
    assert tokens.load(lambda: words) is words


def test_the_default_is_a_tokenizer_or_the_estimate_never_an_error() -> None:
    """Here tiktoken may be installed without network or cache: loading must not raise."""
    encoding = tokens.default_encoding()
    text = "hello there world"
    expected = len(text) // 4 if encoding is None else len(encoding.encode_ordinary(text))
    assert tokens.count(text) == expected


NO_DOWNLOAD = """
import os, sys
os.environ.pop("TIKTOKEN_CACHE_DIR", None)
os.environ.pop("DATA_GYM_CACHE_DIR", None)
from augure.agent import tokens
assert tokens.default_encoding() is None
assert "tiktoken" not in sys.modules, "tiktoken was asked (it would download the encoding)"
"""


def test_without_a_provisioned_cache_tiktoken_is_never_asked(tmp_path: Path) -> None:
    """tiktoken downloads a missing encoding from the internet: it must not even be asked."""
    done = subprocess.run([sys.executable, "-c", NO_DOWNLOAD], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    empty = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path)}
    code = NO_DOWNLOAD.replace('os.environ.pop("TIKTOKEN_CACHE_DIR", None)', "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=empty)
    assert done.returncode == 0, done.stderr


def test_the_same_tool_schemas_are_encoded_once() -> None:
    # They are the same objects every turn; JSON-encoding them each turn only to count them
    # was the largest part of a turn's usage.
    words = WordEncoding()
    schemas: list[dict[str, str]] = [{"name": "tool one"}, {"name": "tool two"}]

    def usage(of: list[dict[str, str]]) -> int:
        split = Tally().usage("m", "system", 0, of, "out", MESSAGES, encoding=words).breakdown
        return split["tool_schemas"]

    def words_in(of: list[dict[str, str]]) -> int:
        return len(json.dumps(of).split())

    assert usage(schemas) == words_in(schemas)
    words.seen.clear()
    assert usage(schemas) == words_in(schemas)
    assert not any("tool one" in seen for seen in words.seen)
    more = [*schemas, {"name": "tool three"}]
    assert usage(more) == words_in(more)
