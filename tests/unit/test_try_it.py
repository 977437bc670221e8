"""The README's "Try it with no accounts": the two fakes run after the Quick start's install
(`pip install '.[all]'`) alone, so every package they import must come with that install."""

from __future__ import annotations

import ast
import re
from importlib.metadata import packages_distributions, requires
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("tests.fakes.telegram", "tests.fakes.openai")


def imported(module: str, seen: set[str] | None = None) -> set[str]:
    """The top-level names of the packages outside the project that `module` imports, through
    every project module it imports in turn."""
    seen = set() if seen is None else seen
    if module in seen:
        return set()
    seen.add(module)
    path = ROOT / Path(*module.split("."))
    source = path / "__main__.py" if path.is_dir() else path.with_suffix(".py")
    if path.is_dir() and not source.exists():
        source = path / "__init__.py"
    outside: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            if name.startswith(("tests.", "augure")):
                if name.startswith("tests."):
                    outside |= imported(name, seen)
            elif name.split(".")[0] not in STANDARD:
                outside.add(name.split(".")[0])
    return outside


STANDARD = set(__import__("sys").stdlib_module_names)


def installed_with(extra: str) -> set[str]:
    """The distributions `pip install '.[extra]'` brings, the project's own closure."""
    wanted = [Requirement(r) for r in requires("augure") or []]
    found: set[str] = set()
    queue = [r for r in wanted if r.marker is None or r.marker.evaluate({"extra": extra})]
    while queue:
        requirement = queue.pop()
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        if name == "augure":  # `all` names the other extras of the project
            queue += [
                r
                for one in requirement.extras
                for r in wanted
                if r.marker is not None and r.marker.evaluate({"extra": one})
            ]
            continue
        if name in found:
            continue
        found.add(name)
        for sub in requires(requirement.name) or []:
            parsed = Requirement(sub)
            if parsed.marker is None or parsed.marker.evaluate({"extra": ""}):
                queue.append(parsed)
    return found


def test_the_fakes_need_nothing_the_quick_start_does_not_install() -> None:
    owners = packages_distributions()
    needed = {
        re.sub(r"[-_.]+", "-", dist).lower()
        for module in COMMANDS
        for top in imported(module)
        for dist in owners.get(top, [top])
    }
    missing = needed - installed_with("all")
    assert not missing, f"`python -m {' / '.join(COMMANDS)}` needs {sorted(missing)}"
