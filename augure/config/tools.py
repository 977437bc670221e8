"""`[tools.NAME]` sections: each tool declares the settings model of its own section.

The section `[tools.NAME]` is declared by the module `augure.tools.NAME`, so loading a config
imports only the modules of the sections it holds (a tool module loads its heavy libraries
only when the tool runs). A deployment's own tools declare theirs the same way, in modules
imported before the config is loaded. This module imports nothing of Augure: the config
loader and the tools both use it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

PACKAGE = "augure.tools"
Model = TypeVar("Model", bound=BaseModel)

_DECLARED: dict[str, type[BaseModel]] = {}


class ToolsConfig(BaseModel):
    """`[tools]`: which tools are on, and each tool's own `[tools.NAME]` section."""

    # Per-tool sections (`[tools.http]`, ...) are checked by `load_config` against the model
    # each tool declares (augure.config.tools), so sub-tables are kept rather than refused.
    model_config = ConfigDict(extra="allow")

    enabled: list[str] = ["*"]
    disabled: list[str] = []

    def section(self, name: str) -> dict[str, Any]:
        extra = self.model_extra or {}
        value = extra.get(name, {})
        return value if isinstance(value, dict) else {}


def settings_for(name: str) -> Callable[[type[Model]], type[Model]]:
    """Class decorator: `model` is what `[tools.NAME]` holds."""

    def declare(model: type[Model]) -> type[Model]:
        known = _DECLARED.setdefault(name, model)
        if known.__qualname__ != model.__qualname__ or known.__module__ != model.__module__:
            raise ValueError(f"[tools.{name}] is declared twice ({known.__name__})")
        _DECLARED[name] = model  # the same class reloaded replaces the old one
        return model

    return declare


def _module_of(name: str) -> str | None:
    """The built-in module that would declare `[tools.NAME]`, if there is one."""
    if not name.isidentifier() or name.startswith("_"):
        return None
    module = f"{PACKAGE}.{name}"
    return module if importlib.util.find_spec(module) is not None else None


def may_declare(name: str) -> bool:
    """Whether `[tools.NAME]` can be a section, without importing anything new."""
    return name in _DECLARED or _module_of(name) is not None


def settings_model(name: str) -> type[BaseModel] | None:
    """The model of `[tools.NAME]`, importing the module of that name when needed."""
    if name not in _DECLARED:
        module = _module_of(name)
        if module is not None:
            importlib.import_module(module)
    return _DECLARED.get(name)


def declared(*, builtin_only: bool = False) -> dict[str, type[BaseModel]]:
    """Every declared section. Imports every built-in tool module (a tool whose optional
    library is missing is skipped): for `augure init` and for naming the closest section."""
    package = importlib.import_module(PACKAGE)
    for found in pkgutil.iter_modules(package.__path__):
        with contextlib.suppress(ImportError):
            importlib.import_module(f"{PACKAGE}.{found.name}")
    return {
        name: model
        for name, model in sorted(_DECLARED.items())
        if not builtin_only or model.__module__.startswith(f"{PACKAGE}.")
    }
