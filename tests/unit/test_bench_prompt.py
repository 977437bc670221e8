"""`python -m bench.prompt` counts with a real tokenizer offline: tiktoken's cl100k_base from
the file bpe-openai ships, its sha256 checked (docs/prompt-economy.md)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from augure.agent import tokens
from bench import prompt

SAMPLES = [
    "hello world",
    "What's on my calendar tomorrow?",
    "Grüße aus Köln — 東京の天気は？ 🌧️",
    'def main() -> None:\n    print({"a": [1, 2, 3]})\n',
    json.dumps({"type": "function", "function": {"name": "web_search", "parameters": {}}}),
]


@pytest.fixture(autouse=True)
def no_provisioned_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on CI: nobody provisioned a tiktoken cache, and nothing may be downloaded."""
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)


def test_the_bench_tokenizer_loads_with_no_provisioned_cache() -> None:
    encoding = prompt.cl100k()
    # cl100k_base's published ids for these words.
    assert encoding.encode_ordinary("hello world") == [15339, 1917]


# bpe-openai reads its own data with a call Python 3.11 calls deprecated.
@pytest.mark.filterwarnings("ignore:open_binary is deprecated:DeprecationWarning")
def test_tiktoken_and_bpe_openai_s_own_tokenizer_agree_token_for_token() -> None:
    import bpe_openai  # loads its tokenizer data as it is imported

    ours, theirs = prompt.cl100k(), bpe_openai.get_encoding("cl100k_base")
    for sample in SAMPLES:
        assert ours.encode_ordinary(sample) == theirs.encode_ordinary(sample), sample


def test_the_counts_differ_from_the_four_characters_a_token_estimate() -> None:
    encoding = prompt.cl100k()
    text = "東京の天気は？ " * 50  # three bytes a character: far from 4 characters a token
    assert tokens.count(text, encoding) != tokens.count(text, None)


def test_a_file_whose_sha256_differs_is_refused(tmp_path: Path) -> None:
    real = gzip.decompress(prompt.bundled_bpe("cl100k_base").read_bytes())
    assert hashlib.sha256(real).hexdigest() == prompt.CL100K_SHA256
    tampered = tmp_path / "cl100k_base.tiktoken.gz"
    tampered.write_bytes(gzip.compress(real.replace(b"IQ== 0", b"Ig== 0", 1)))
    with pytest.raises(SystemExit, match="refused"):
        prompt.checked_bpe(tampered, prompt.CL100K_SHA256)
