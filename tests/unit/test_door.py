"""The door stays small and is the one way into the state: each of its modules and desks has
fewer than 20 public members, docs/architecture.md lists each desk's members as the code has
them, and only the store itself and the lifespan open state.db (`Store.open`)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from augure.core.door.chat import ChatDesk
from augure.core.door.doors import Door, ReadingDoor
from augure.core.door.owner import OwnerDesk
from augure.core.door.reports import Reports
from augure.core.door.running import RunningDesk

ROOT = Path(__file__).resolve().parents[2]
DOOR = ROOT / "augure" / "core" / "door"
SECTION = "## The door"
MAX_MEMBERS = 20
DESKS = {"chat": ChatDesk, "owner": OwnerDesk, "reports": Reports, "running": RunningDesk}
# Where state.db may be opened: the store's own package, and the lifespan that opens it for
# the running core and for the reading door (docs/architecture.md, "The door").
OPENERS = ("augure/store/", "augure/core/lifespan.py")


def public_names(module: str) -> list[str]:
    loaded = importlib.import_module(module)
    listed = getattr(loaded, "__all__", None)
    if listed is not None:
        return list(listed)
    return [
        name
        for name, value in vars(loaded).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module
    ]


def members(desk: type) -> list[str]:
    """A desk's public attributes: its methods and properties, and what `__init__` sets."""
    found = [name for name in vars(desk) if not name.startswith("_")]
    source = inspect.getsource(desk.__init__)  # type: ignore[misc]
    found += [name for name in re.findall(r"self\.(\w+)\b(?:: [^=]+)? =", source)]
    return [name for name in dict.fromkeys(found) if not name.startswith("_")]


@pytest.mark.parametrize("path", sorted(DOOR.glob("*.py")), ids=lambda p: p.name)
def test_each_door_module_has_fewer_than_20_public_members(path: Path) -> None:
    module = "augure.core.door" + ("" if path.stem == "__init__" else f".{path.stem}")
    assert len(public_names(module)) < MAX_MEMBERS, public_names(module)


@pytest.mark.parametrize("name", list(DESKS))
def test_each_desk_has_fewer_than_20_public_members(name: str) -> None:
    assert len(members(DESKS[name])) < MAX_MEMBERS, members(DESKS[name])


def documented() -> dict[str, list[str]]:
    """The table under the door's heading: a desk's attribute on the door, its members."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split(SECTION + "\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \(`\w+`\) \| (.+?) \|$", section, re.MULTILINE)
    return {desk: re.findall(r"`(\w+)`", listed) for desk, listed in rows}


def test_the_architecture_page_lists_each_desk_as_the_code_has_it() -> None:
    assert documented() == {name: members(desk) for name, desk in DESKS.items()}


def test_reading_is_a_door_without_a_chat_desk_or_what_runs() -> None:
    assert not hasattr(ReadingDoor, "chat") and "chat" not in members(ReadingDoor)
    assert {"chat", "running"} <= set(members(Door)) and issubclass(Door, ReadingDoor)


def store_openings(root: Path) -> list[str]:
    """Each `Store.open(...)` call under `root`, as `path:line`."""
    found = []
    for source in sorted(root.rglob("*.py")):
        relative = source.relative_to(root.parent).as_posix()
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "open"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "Store"
            ):
                found.append(f"{relative}:{node.lineno}")
    return found


def test_only_the_store_and_the_lifespan_open_the_state() -> None:
    """A CLI command, the dashboard or a channel reads and writes through the door; one that
    opened state.db itself would be a second way in (eight commands once did)."""
    opened = store_openings(ROOT / "augure")
    assert [place for place in opened if not place.startswith(OPENERS)] == []
    assert any(place.startswith("augure/core/lifespan.py") for place in opened)
