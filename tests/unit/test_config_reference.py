"""docs/reference/config-keys.md is exactly what the generator makes from today's config models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from augure.config.reference import reference
from augure.config.template import all_keys

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "config-keys.md"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Defaults only: a variable set on this machine must not leak into the reference.
    for name in list(os.environ):
        if name.startswith(("AUGURE", "OPENAI", "TELEGRAM")):
            monkeypatch.delenv(name)


def test_the_committed_reference_is_what_the_generator_makes_today() -> None:
    assert DOC.read_text(encoding="utf-8") == reference(), (
        "docs/reference/config-keys.md is stale: run "
        "`python -m augure.config.reference > docs/reference/config-keys.md`"
    )


def test_every_key_has_a_row_or_a_section() -> None:
    text = reference()
    for key in all_keys():
        section, _, name = key.replace(".*", ".NAME").rpartition(".")
        table = key.replace(".*", ".NAME")
        if f"## `[{table}]`" in text or f"## `[{table}.NAME]`" in text:
            continue
        body = text.split(f"## `[{section}]`\n", 1)[1].split("\n## ", 1)[0]
        assert f"| `{name}` |" in body, key
