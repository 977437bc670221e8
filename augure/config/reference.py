"""docs/reference/config-keys.md, generated from the config models like the `augure.toml` template,
so the reference cannot drift from the code: `python -m augure.config.reference > FILE`."""

from __future__ import annotations

from pydantic import BaseModel

from augure.config.settings import Config
from augure.config.template import (
    DESCRIPTIONS,
    NOT_SET,
    _dict_of_models,
    _sub_model,
    _toml_value,
    described_as,
    described_key,
    split,
)
from augure.config.tools import declared

INTRO = """\
# Configuration keys

Generated from the config models by `python -m augure.config.reference` (a test checks this
file against it): every section and key of `augure.toml`, its default and what it means.
[configuration.md](configuration.md) says where values come from and what is checked at
start; `augure init` writes the same keys, commented out, into `augure.toml`.

Any key can also be set in the environment as `AUGURE__SECTION__KEY` (for `[tools.NAME]`:
`AUGURE__TOOLS__NAME__KEY`), which wins over the file. Secrets are best kept in the
environment or in `$AUGURE_HOME/.env`, never in the file.
"""


def reference() -> str:
    out = [INTRO]
    for name, field in Config.model_fields.items():
        sub = _sub_model(field)
        if not field.exclude and (item := _dict_of_models(field)) is not None:
            _section(out, item, f"{name}.NAME")
        if field.exclude or sub is None:
            continue
        _section(out, sub, name)
    for tool_name, model in declared(builtin_only=True).items():
        _section(out, model, f"tools.{tool_name}")
    return "\n".join(out).rstrip() + "\n"


def _section(out: list[str], model: type[BaseModel], path: str) -> None:
    out += [f"## `[{path}]`", "", DESCRIPTIONS[described_as(path)], ""]
    rows: list[str] = []
    plain, tables = split(model, path)
    for name, key, field in plain:
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        shown = _toml_value(default)
        meaning = described_key(key).replace("|", "\\|")
        rows.append(
            f"| `{name}` | `{shown}` | {meaning} |"
            if shown
            else f"| `{name}` | {NOT_SET} | {meaning} |"
        )
    if rows:
        out += ["| key | default | meaning |", "| --- | --- | --- |", *rows, ""]
    for sub, key in tables:
        _section(out, sub, key)


if __name__ == "__main__":
    print(reference(), end="")
