"""Where results too long for one tool message are kept, for `read_output` to page through."""

from __future__ import annotations

from pathlib import Path

OUTPUT_LIMIT = 12_000  # characters of one result the model gets at once (~3,000 tokens)


def output_file(outputs: Path, invocation: str) -> Path:
    return outputs / f"{invocation}.txt"


def source_file(outputs: Path, invocation: str) -> Path:
    """Beside a saved output: the tool whose outside content it is (absent when trusted)."""
    return outputs / f"{invocation}.source"


def save(outputs: Path, invocation: str, content: str, source: str | None) -> None:
    outputs.mkdir(parents=True, exist_ok=True)
    if source is not None:
        source_file(outputs, invocation).write_text(source, encoding="utf-8")
    output_file(outputs, invocation).write_text(content, encoding="utf-8")
