"""Where a dotted key leads in the config models: the walk behind "unknown key; did you mean
…?" for the toml file and the `AUGURE__SECTION__KEY` variables alike.

It knows only pydantic models: `settings.py` hands in its root model and the `[tools]` table's
model with the lookup of each tool's declared section, so this sits below it.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from pydantic import BaseModel


@dataclass(frozen=True)
class Keys:
    root: type[BaseModel]
    tools: type[BaseModel]  # `[tools]`: its keys are the tools' declared sections
    declared: Callable[[str], type[BaseModel] | None]
    declared_names: Callable[[], Iterable[str]]

    def model_at(self, loc: tuple[str, ...]) -> type[BaseModel] | None:
        """The model that holds the last part of `loc`, to suggest its valid keys."""
        model, unknown = self.walk(list(loc[:-1]))
        return None if unknown is not None else model

    def walk(self, parts: list[str]) -> tuple[type[BaseModel] | None, int | None]:
        """Follow `parts` down from the root: the model reached (None past a plain value, or
        on a name the owner chose), and the index of the first part that names no key."""
        model: type[BaseModel] | None = self.root
        owner_named = False  # this part is a name the owner chose, as NAME in [profiles.NAME]
        for index, part in enumerate(parts):
            if owner_named:
                owner_named = False
                continue
            if model is None:  # below a plain value: its own validation judges the rest
                return None, None
            step = self._step(model, part)
            if step is None:
                return model, index
            model, owner_named = step
        return (None if owner_named else model), None

    def _step(
        self, model: type[BaseModel], part: str
    ) -> tuple[type[BaseModel] | None, bool] | None:
        """Where `part` leads from `model`: the model there (None for a plain value) and
        whether the next part is a name the owner chose; None when there is no such key."""
        field = model.model_fields.get(part)
        if field is not None and not field.exclude:
            annotation, owner_named = field.annotation, False
            if typing.get_origin(annotation) is dict:  # `presets.NAME`: a free-form name next
                annotation, owner_named = typing.get_args(annotation)[1], True
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                return annotation, owner_named
            return None, False
        if model is self.tools:
            declared = self.declared(part)
            return None if declared is None else (declared, False)
        named = getattr(model, "NAMED_TABLES", None)
        return None if named is None else (named, False)

    def valid(self, loc: tuple[str, ...]) -> list[str]:
        model = self.model_at(loc)
        return [] if model is None else self.of(model)

    def of(self, model: type[BaseModel]) -> list[str]:
        keys = [name for name, field in model.model_fields.items() if not field.exclude]
        if model is self.tools:
            keys += list(self.declared_names())
        return keys

    def nearest(self, parts: list[str]) -> list[str] | None:
        """`parts` with each unknown one replaced by its closest valid name, if all have one."""
        # difflib loads only for an error's "did you mean" (docs/performance.md).
        import difflib

        fixed = list(parts)
        for _ in parts:
            model, index = self.walk(fixed)
            if index is None:
                return fixed
            assert model is not None  # an unknown part is always a key of some model
            close = difflib.get_close_matches(fixed[index], self.of(model), n=1, cutoff=0.6)
            if not close:
                return None
            fixed[index] = close[0]
        return None
