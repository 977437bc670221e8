"""The house check: Augure measured from its own imports and definitions.

    python scripts/house.py            # the figures, then the faults; exit 1 on any fault

Rooms are the modules and packages directly under `augure/`; floors are the layers of the
first import-linter contract in pyproject.toml (docs/architecture.md draws them). The check
fails on any circle of imports, type-only imports (under ``if TYPE_CHECKING:``) included,
between modules or between the children of any package; on a module over 400 lines; and on
a function over 60 lines (from its ``def`` line to its last line, nested functions counted
in the one that holds them). tests/unit/test_house.py runs the same checks.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import grimp

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
REPOSITORY = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, order=True)
class Sized:
    """A module or a function and its length in lines; `name` is dotted
    (`augure.core.app.build_core`)."""

    lines: int
    name: str


def import_graph(package: str) -> dict[str, set[str]]:
    """Who imports whom inside `package`, counting imports made only for type checkers: a
    circle through them still ties the modules' meanings together."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    imported = graph.find_modules_directly_imported_by
    return {module: set(imported(module)) for module in graph.modules}


def strongly_connected(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import circles: each group of two or more nodes that all reach one another
    (Tarjan's algorithm, iterative so a deep package cannot overflow the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def _collapsed(edges: Mapping[str, set[str]], package: str) -> dict[str, set[str]]:
    """The imports between the children of `package`, each child standing for everything
    under it: what import-linter's `acyclic_siblings` reads, here at every depth."""
    depth = package.count(".") + 1

    def child(module: str) -> str | None:
        parts = module.split(".")
        if len(parts) <= depth or ".".join(parts[:depth]) != package:
            return None
        return ".".join(parts[: depth + 1])

    collapsed: dict[str, set[str]] = {}
    for importer, imported in edges.items():
        source = child(importer)
        if source is None:
            continue
        targets = collapsed.setdefault(source, set())
        for module in imported:
            target = child(module)
            if target is not None and target != source:
                targets.add(target)
    return collapsed


def import_circles(package: str) -> list[list[str]]:
    """Every circle between modules, and between the children of each package."""
    edges = import_graph(package)
    circles = strongly_connected(edges)
    packages = {m.rsplit(".", 1)[0] for m in edges if "." in m}
    for parent in sorted(packages):
        for circle in strongly_connected(_collapsed(edges, parent)):
            if circle not in circles:
                circles.append(circle)
    return circles


def _dotted(source: Path, root: Path) -> str:
    relative = source.relative_to(root.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def modules(root: Path) -> list[Sized]:
    found = []
    for source in sorted(root.rglob("*.py")):
        lines = len(source.read_text(encoding="utf-8").splitlines())
        found.append(Sized(lines, _dotted(source, root)))
    return sorted(found, reverse=True)


def functions(root: Path) -> list[Sized]:
    found = []
    for source in sorted(root.rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        found.extend(_functions_in(tree, _dotted(source, root)))
    return sorted(found, reverse=True)


def _functions_in(node: ast.AST, prefix: str) -> list[Sized]:
    found = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}.{child.name}"
            if not isinstance(child, ast.ClassDef):
                assert child.end_lineno is not None
                found.append(Sized(child.end_lineno - child.lineno + 1, name))
            found.extend(_functions_in(child, name))
        else:
            found.extend(_functions_in(child, prefix))
    return found


def floors(pyproject: Path) -> list[str]:
    settings = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    contracts = settings["tool"]["importlinter"]["contracts"]
    layers: list[str] = next(c["layers"] for c in contracts if c["type"] == "layers")
    return layers


def rooms(root: Path) -> list[str]:
    children = [p.stem for p in root.glob("*.py") if p.stem != "__init__"]
    children += [p.name for p in root.iterdir() if (p / "__init__.py").exists()]
    return sorted(children)


def faults(package: str, root: Path) -> list[str]:
    """Every breach of the house rules, one line each; empty when the house is in order."""
    found = [f"import circle: {' <-> '.join(c)}" for c in import_circles(package)]
    found += [
        f"module over {MAX_MODULE_LINES} lines: {m.name} ({m.lines})"
        for m in modules(root)
        if m.lines > MAX_MODULE_LINES
    ]
    found += [
        f"function over {MAX_FUNCTION_LINES} lines: {f.name} ({f.lines})"
        for f in functions(root)
        if f.lines > MAX_FUNCTION_LINES
    ]
    return found


def report(package: str = "augure", top: int = 5) -> list[str]:
    root = REPOSITORY / package
    every_module, every_function = modules(root), functions(root)
    lengths = sorted(f.lines for f in every_function)
    lines = [
        f"rooms: {len(rooms(root))} (modules and packages under {package}/), "
        f"{len(every_module)} modules in all",
        f"floors: {len(floors(REPOSITORY / 'pyproject.toml'))} (import-linter layers)",
        f"functions: {len(lengths)}, median {lengths[len(lengths) // 2]} lines",
        "largest modules:",
        *(f"  {m.lines:5d}  {m.name}" for m in every_module[:top]),
        "largest functions:",
        *(f"  {f.lines:5d}  {f.name}" for f in every_function[:top]),
    ]
    return lines


def main() -> int:
    sys.path.insert(0, str(REPOSITORY))
    print("\n".join(report()))
    found = faults("augure", REPOSITORY / "augure")
    print("faults:" if found else "faults: none")
    print("\n".join(f"  {fault}" for fault in found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
