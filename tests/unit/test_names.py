"""Each public type name is defined once in augure/: a class or a module-level type alias
(any CapWords name assigned at the top of a module) lives in one module and is imported
from there. Functions named alike by design (`add_parser` in the CLI's modules, `routes`
in the dashboard's pages) are not types, and are not counted."""

from __future__ import annotations

import ast
import textwrap
from collections import defaultdict
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """A module's statements, with those under a top-level `if` or `try` (TYPE_CHECKING,
    an optional import) counted as top-level too."""
    found: list[ast.stmt] = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, ast.If):
            found += _top_level(statement.body + statement.orelse)
        elif isinstance(statement, ast.Try):
            inner = statement.body + statement.orelse + statement.finalbody
            found += _top_level(inner + [s for h in statement.handlers for s in h.body])
    return found


def _type_names(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.ClassDef):
        return [statement.name]
    if isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets: list[ast.expr] = [statement.target]
    elif isinstance(statement, ast.Assign):
        targets = statement.targets
    else:
        return []
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    # CapWords, not a CONSTANT: a type alias, a TypeVar, or an alias of a class.
    return [n for n in names if n[:1].isupper() and not n.isupper()]


def public_types(root: Path) -> dict[str, list[str]]:
    """Each public type name defined at the top of a module under `root`, with the modules
    (paths relative to root's parent) defining it."""
    defined: dict[str, set[str]] = defaultdict(set)
    for source in sorted(root.rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for statement in _top_level(tree.body):
            for name in _type_names(statement):
                if not name.startswith("_"):
                    defined[name].add(source.relative_to(root.parent).as_posix())
    return {name: sorted(modules) for name, modules in sorted(defined.items())}


def twins(root: Path) -> dict[str, list[str]]:
    return {name: modules for name, modules in public_types(root).items() if len(modules) > 1}


def test_each_public_type_name_is_defined_in_one_module_of_augure() -> None:
    found = twins(REPOSITORY / "augure")
    assert found == {}


def test_a_class_and_an_alias_of_one_name_in_two_modules_are_twins(tmp_path: Path) -> None:
    package = tmp_path / "cottage"
    (package / "inner").mkdir(parents=True)
    (package / "low.py").write_text("class Door:\n    pass\n\n\ndef routes() -> None: ...\n")
    (package / "inner" / "high.py").write_text(
        textwrap.dedent(
            """
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                Door = int | str
            WINDOWS = 3
            _Hidden = int
            def routes() -> None: ...
            """
        )
    )
    (package / "other.py").write_text("WINDOWS = 4\n_Hidden = str\nclass Roof: ...\n")
    assert twins(package) == {"Door": ["cottage/inner/high.py", "cottage/low.py"]}
