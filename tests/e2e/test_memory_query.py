"""`memory_read` with `query`: the matching lines of every memory file, as the model gets them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.helpers import augure, environment


async def _write(env: dict[str, str], path: str, content: str) -> None:
    args = json.dumps({"path": path, "content": content})
    code, _, err = await augure("tools", "run", "memory_write", "--args", args, env=env)
    assert code == 0, err


async def _query(env: dict[str, str], **args: str) -> tuple[int, str]:
    code, out, _ = await augure("tools", "run", "memory_read", "--args", json.dumps(args), env=env)
    return code, out


async def test_query_returns_matching_lines_of_every_file_with_file_and_line(
    tmp_path: Path,
) -> None:
    env = environment(tmp_path)
    await _write(env, "people.md", "# People\n- Alice: allergic to PEANUTS\n- Bob: likes tea\n")
    await _write(env, "notes/food.md", "Dinner ideas\nno peanuts for alice!\npeanuts only\n")

    code, out = await _query(env, query="alice peanuts")
    assert code == 0
    # Every word, any case, any order; lines with only one of them are left out.
    assert out.strip().splitlines() == [
        "notes/food.md:2: no peanuts for alice!",
        "people.md:2: - Alice: allergic to PEANUTS",
    ]

    code, out = await _query(env, query="alice", path="people.md")
    assert code == 0 and out.strip() == "people.md:2: - Alice: allergic to PEANUTS"

    code, out = await _query(env, query="durian")
    assert code == 0 and "No line" in out and "durian" in out


async def test_query_with_many_matches_is_cut_and_says_so(tmp_path: Path) -> None:
    env = environment(tmp_path)
    await _write(env, "log.md", "".join(f"entry {n} about tea\n" for n in range(500)))
    code, out = await _query(env, query="tea")
    lines = out.strip().splitlines()
    assert code == 0
    assert lines[0] == "log.md:1: entry 0 about tea"
    assert len(lines) < 100
    assert "more matching lines not shown" in lines[-1] and "450" in lines[-1]
