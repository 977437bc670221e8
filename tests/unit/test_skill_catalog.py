"""The prompt's skills catalog is kept in state.db: a start whose skills did not change reads
no SKILL.md (and loads no YAML parser); any change to a skill makes it anew."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from augure.skills.model import SKILL_MD
from augure.skills.store import SkillStore
from augure.store.state import Store


def skill_md(description: str) -> bytes:
    return (
        f"---\nname: notes\ndescription: {description}\nversion: 1.0.0\n"
        "trigger: manual\ntools: [memory_read]\n---\n\nRead the notes.\n"
    ).encode()


async def installed(home: Path, description: str = "Reads the notes.") -> tuple[Store, SkillStore]:
    store = await Store.open(home / "state.db")
    skills = SkillStore(home / "skills", store)
    skills.write("notes", {SKILL_MD: skill_md(description)})
    await skills.put("notes", state="active", version="1.0.0", source="local")
    return store, skills


async def test_a_start_with_unchanged_skills_parses_no_skill_md(tmp_path: Path) -> None:
    store, skills = await installed(tmp_path)
    first = await skills.catalog()
    await store.close()
    assert "- notes: Reads the notes." in first
    probe = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from augure.skills.store import SkillStore
        from augure.store.state import Store

        async def main():
            store = await Store.open(Path({str(tmp_path / "state.db")!r}))
            text = await SkillStore(Path({str(tmp_path / "skills")!r}), store).catalog()
            await store.close()
            print(text)
            print("yaml" in sys.modules)

        asyncio.run(main())
        """
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert output == f"{first}\nFalse\n"


async def test_an_edited_skill_md_is_read_again(tmp_path: Path) -> None:
    store, skills = await installed(tmp_path)
    assert "Reads the notes." in await skills.catalog()
    path = tmp_path / "skills" / "notes" / SKILL_MD
    path.write_bytes(skill_md("Reads the notes and the calendar."))
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp + 1_000_000, stamp + 1_000_000))  # a clock too coarse to tell
    assert "- notes: Reads the notes and the calendar." in await skills.catalog()
    await store.close()


async def test_a_paused_or_removed_skill_leaves_the_catalog(tmp_path: Path) -> None:
    store, skills = await installed(tmp_path)
    assert "notes" in await skills.catalog()
    await skills.set_state("notes", "paused", "by the owner")
    assert await skills.catalog() == ""
    await skills.set_state("notes", "active")
    assert "notes" in await skills.catalog()
    skills.remove_files("notes")
    assert await skills.catalog() == ""
    await store.close()
