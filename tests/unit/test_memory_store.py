import os
from pathlib import Path

import pytest

from augure.memory.store import MemoryPathError, MemoryStore


@pytest.fixture
def memory(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memory")
    store.ensure()
    return store


def test_first_run_copies_the_identity_template(memory: MemoryStore) -> None:
    assert "Augure" in memory.read("identity.md")


def test_templates_never_overwrite_the_owners_files(memory: MemoryStore) -> None:
    memory.write("identity.md", "mine")
    memory.ensure()
    assert memory.read("identity.md") == "mine"


def test_write_read_list_in_subfolders(memory: MemoryStore) -> None:
    memory.write("notes/today.md", "hello")
    assert memory.read("notes/today.md") == "hello"
    assert ("notes/today.md", 5) in memory.list()


@pytest.mark.parametrize(
    "path",
    [
        "../escape.md",
        "/etc/passwd",
        "notes/../../escape.md",
        "..\\escape.md",
        "~/x.md",
        "",
        "a\x00b",
    ],
)
def test_paths_leaving_the_folder_are_refused(memory: MemoryStore, path: str) -> None:
    with pytest.raises(MemoryPathError):
        memory.write(path, "x")
    assert not (memory.root.parent / "escape.md").exists()


def test_symlink_out_of_the_folder_is_refused(memory: MemoryStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret")
    os.symlink(outside, memory.root / "link")
    with pytest.raises(MemoryPathError, match="symlink"):
        memory.read("link/secret.md")
    with pytest.raises(MemoryPathError):
        memory.write("link/new.md", "x")
    assert not (outside / "new.md").exists()


def test_prompt_section_puts_identity_first_and_keeps_newest_lines(memory: MemoryStore) -> None:
    memory.write("identity.md", "I am the identity.")
    memory.write("observations.md", "\n".join(f"observation {i}" for i in range(500)))
    section = memory.prompt_section(max_tokens=200)
    assert section.startswith("## identity.md\nI am the identity.")
    assert "observation 499" in section
    assert "observation 0\n" not in section
    assert len(section) <= 200 * 4


def test_prompt_section_with_zero_budget_is_empty(memory: MemoryStore) -> None:
    assert memory.prompt_section(0) == ""


def test_prompt_section_follows_files_edited_added_and_removed_outside(
    memory: MemoryStore,
) -> None:
    # The section is cached between turns: each kind of change on disk must still show.
    memory.write("identity.md", "I am the identity.")
    memory.write("notes.md", "first version")
    assert "first version" in memory.prompt_section(500)

    (memory.root / "notes.md").write_text("second version, longer")  # in place, as an editor
    assert "second version, longer" in memory.prompt_section(500)

    (memory.root / "topics").mkdir()
    (memory.root / "topics" / "cats.md").write_text("cats purr")
    assert "## topics/cats.md\ncats purr" in memory.prompt_section(500)

    (memory.root / "notes.md").unlink()
    section = memory.prompt_section(500)
    assert "second version" not in section
    assert "cats purr" in section


def test_prompt_section_follows_a_rewrite_of_the_same_size_and_time(memory: MemoryStore) -> None:
    memory.write("notes.md", "apples")
    before = (memory.root / "notes.md").stat()
    assert "apples" in memory.prompt_section(500)
    memory.write("notes.md", "grapes")  # same size; then even the same modification time
    os.utime(memory.root / "notes.md", ns=(before.st_atime_ns, before.st_mtime_ns))
    section = memory.prompt_section(500)
    assert "grapes" in section
    assert "apples" not in section


def test_prompt_section_budget_change_is_not_served_from_cache(memory: MemoryStore) -> None:
    memory.write("notes.md", "x" * 4000)
    assert len(memory.prompt_section(1000)) > len(memory.prompt_section(100))
