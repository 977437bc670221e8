"""The bundled skills: valid, scan clean, and (code skills) pass their own test."""

from __future__ import annotations

from pathlib import Path

import pytest

from augure.codemode.runtime import RunLimits
from augure.config.settings import Config
from augure.core.toolset import build_registry
from augure.skills.model import FILES, SKILL_MD, SKILL_PY, parse_skill_md, parse_test_json
from augure.skills.runner import check_skill_code
from augure.skills.scan import scan
from augure.skills.store import bundled_dir

BUNDLED = bundled_dir()
FOLDERS = sorted(p for p in BUNDLED.iterdir() if p.is_dir()) if BUNDLED else []


def test_the_bundled_folder_is_found_with_both_kinds_of_skill() -> None:
    assert BUNDLED is not None and Path(__file__).resolve().parents[2] / "skills" == BUNDLED
    names = {p.name for p in FOLDERS}
    assert {"daily-digest", "weekly-review"} <= names
    assert (BUNDLED / "daily-digest" / SKILL_PY).is_file()
    assert not (BUNDLED / "weekly-review" / SKILL_PY).exists()


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
async def test_a_bundled_skill_is_valid_clean_and_passes_its_test(folder: Path) -> None:
    files = {n: (folder / n).read_bytes() for n in FILES if (folder / n).is_file()}
    assert set(p.name for p in folder.iterdir()) == set(files)  # nothing else is shipped
    meta = parse_skill_md(files[SKILL_MD].decode(), folder.name)
    registry = build_registry(Config())
    known = {t.name for t in registry.list()}
    result = scan(files, meta.tools, known)
    assert result.ok, result.verdict()
    if SKILL_PY in files:
        test = parse_test_json((folder / "test.json").read_text())
        assert test.expect_output_contains
        code = files[SKILL_PY].decode()
        checked = await check_skill_code(code, meta.tools, test, registry, RunLimits(10, 50))
        assert checked.passed, checked.detail
