"""One error tree: every exception class in augure/ derives from AugureError through a kind,
and the tree drawn in augure/common/errors.py is the one that exists."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import augure
from augure.common import errors
from augure.common.errors import AugureError

PACKAGE = Path(augure.__file__).parent
KINDS = {"UsageError", "LLMError", "NotDone", "Unavailable"}


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top of a module of augure/, by name."""
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages([str(PACKAGE)], "augure."):
        if module_info.name.endswith("__main__"):
            continue  # running it is the CLI
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                assert value.__name__ not in found, f"two exception classes {value.__name__}"
                found[value.__name__] = value
    return found


def drawn_tree() -> dict[str, tuple[str | None, str | None]]:
    """The docstring's tree: each class with its parent and the module it names, if any."""
    doc = errors.__doc__
    assert doc is not None
    lines = doc[doc.index("    AugureError") :].split("\n\n", 1)[0].splitlines()
    tree: dict[str, tuple[str | None, str | None]] = {}
    parents: list[str] = []
    for line in lines:
        name = re.search(r"[A-Za-z_]\w*", line)
        assert name is not None, line
        depth = (name.start() - 4) // 4
        del parents[depth:]
        module = re.search(r"\b([\w/]+)\.py\b", line[name.end() :])
        tree[name.group()] = (parents[-1] if parents else None, module and module.group(1))
        parents.append(name.group())
    return tree


def test_every_exception_class_derives_from_augure_error_through_a_kind() -> None:
    found = exception_classes()
    assert found
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, AugureError))
    assert outside == []
    kindless = sorted(
        name
        for name, cls in found.items()
        if name not in KINDS | {"AugureError"} and not any(issubclass(cls, found[k]) for k in KINDS)
    )
    assert kindless == []


def test_the_drawn_tree_is_the_tree_that_exists() -> None:
    found = exception_classes()
    tree = drawn_tree()
    assert sorted(tree) == sorted(found)
    for name, (parent, module) in tree.items():
        cls = found[name]
        ours = [base.__name__ for base in cls.__bases__ if issubclass(base, AugureError)]
        assert ours == ([parent] if parent else []), name
        if module is not None:
            assert cls.__module__ == "augure." + module.replace("/", "."), name
        else:
            assert cls.__module__ == errors.__name__, name
