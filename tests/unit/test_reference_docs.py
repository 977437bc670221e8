"""docs/reference/ stays the contract the code keeps: every command, config key and built-in
tool is described there, and every citation of a page of docs/ (or of a section of one)
lands on something that exists. Each topic has one page: a guide under docs/ never bears the
name of a reference page, so the two cannot drift apart. Nothing may cite a contract kept
outside the repository."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from augure.cli.parser import build_parser
from augure.config.settings import Config
from augure.config.template import _dict_of_models, _sub_model
from augure.config.tools import declared
from augure.core.toolset import builtin_tools

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
KEY_TABLE = REFERENCE / "config-keys.md"
# Options every command takes; commands.md describes them once, at the top.
COMMON_OPTIONS = {"-h", "--help", "--config", "-v", "--verbose"}


def _page(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def _section(text: str, heading_start: str) -> str:
    """From the heading that starts with `heading_start` to the next heading of any level."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(heading_start):
            rest = lines[index + 1 :]
            end = next((i for i, tail in enumerate(rest) if tail.startswith("#")), len(rest))
            return "\n".join([line, *rest[:end]])
    raise AssertionError(f"no heading starting with {heading_start!r}")


def _command_sections(text: str, name: str) -> str:
    """Every section whose heading names `augure NAME` (`augure approve ID` / `augure reject
    ID` is the section of both), joined."""
    named = re.compile(rf"`augure {re.escape(name)}[ `]")
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        if line.startswith("#") and named.search(line):
            rest = lines[index + 1 :]
            end = next((i for i, tail in enumerate(rest) if tail.startswith("#")), len(rest))
            found += [line, *rest[:end]]
    return "\n".join(found)


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {
        option
        for action in parser._actions
        for option in action.option_strings
        if option not in COMMON_OPTIONS
    }


def test_every_command_its_subcommands_and_its_options_are_in_commands_md() -> None:
    page = _page("commands.md")
    missing = []
    for name, command in _commands(build_parser()).items():
        section = _command_sections(page, name)
        if not section:
            missing.append(f"augure {name}: no section")
            continue
        missing += [f"augure {name} {o}" for o in _options(command) if not _mentions(section, o)]
        for sub_name, sub in _commands(command).items():
            if not _mentions(section, sub_name):
                missing.append(f"augure {name} {sub_name}")
            missing += [
                f"augure {name} {sub_name} {option}"
                for option in _options(sub)
                if not _mentions(section, option)
            ]
    assert not missing, f"not described in docs/reference/commands.md: {missing}"


def _settings(model: type[BaseModel], path: str) -> Iterator[tuple[str, str | None]]:
    """(section, key) of every setting under `path`; (section, None) for the section itself."""
    yield path, None
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        if (table := _dict_of_models(field)) is not None:
            yield from _settings(table, f"{path}.{name}.NAME")
        elif (sub := _sub_model(field)) is not None:
            yield from _settings(sub, f"{path}.{name}")
        else:
            yield path, name


def _every_setting() -> Iterator[tuple[str, str | None]]:
    for name, field in Config.model_fields.items():
        if field.exclude:
            continue
        if (table := _dict_of_models(field)) is not None:
            yield from _settings(table, f"{name}.NAME")
        elif (sub := _sub_model(field)) is not None:
            yield from _settings(sub, name)
    for name, model in declared(builtin_only=True).items():
        yield from _settings(model, f"tools.{name}")


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def test_every_config_section_is_linked_from_configuration_md_and_every_key_has_a_row() -> None:
    page = _page("configuration.md")
    table = KEY_TABLE.read_text(encoding="utf-8")
    missing = []
    for section, key in _every_setting():
        if key is None:
            if f"config-keys.md#{_anchor(f'`[{section}]`')})" not in page:
                missing.append(f"[{section}] is not linked from configuration.md")
            continue
        body = _section(table, f"## `[{section}]`")
        if f"| `{key}` |" not in body:
            missing.append(f"{section}.{key} has no row in config-keys.md")
    assert not missing, missing


def test_every_builtin_tool_and_each_of_its_parameters_is_in_tools_md() -> None:
    page = _page("tools.md")
    rows = {
        match.group(1): line
        for line in page.splitlines()
        if (match := re.match(r"\| `([a-z_]+)` \|", line))
    }
    missing = []
    for tool in builtin_tools(Config()):
        row = rows.get(tool.name)
        if row is None:
            missing.append(tool.name)
            continue
        properties = tool.parameters.get("properties", {})
        missing += [f"{tool.name}.{name}" for name in properties if f"`{name}" not in row]
    assert not missing, f"not in the table of docs/reference/tools.md: {missing}"


def test_the_deferred_tools_named_are_the_builtin_tools_marked_deferred() -> None:
    section = _section(_page("tools.md"), "## Deferred tools")
    listing = section.split("Deferred today:", 1)[1].split(";", 1)[0]
    named = set(re.findall(r"`([a-z_]+)`", listing))
    for tool in builtin_tools(Config()):
        assert (tool.name in named) == tool.deferred, f"{tool.name}: deferred={tool.deferred}"


def _cited_texts() -> Iterator[tuple[Path, str]]:
    for folder in ("augure", "docs", "tests", "bench", "skills"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in {".py", ".md"} and path.is_file():
                yield path, path.read_text(encoding="utf-8")
    for name in ("README.md", "pyproject.toml"):
        yield ROOT / name, (ROOT / name).read_text(encoding="utf-8")


OUTSIDE_CONTRACT = re.compile(r"\bSPEC\b|SPEC\.md")


def test_nothing_cites_a_contract_kept_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path, text in _cited_texts()
        if path != Path(__file__).resolve()
        for number, line in enumerate(text.splitlines(), 1)
        if OUTSIDE_CONTRACT.search(line)
    ]
    assert not found, "cite a page of docs/reference/ instead:\n" + "\n".join(found)


def _anchors(page: Path) -> set[str]:
    headings = [line.lstrip("#") for line in page.read_text().splitlines() if line[:1] == "#"]
    return {_anchor(heading) for heading in headings}


CITATION = re.compile(r"(?<![\w/.-])docs/((?:reference/)?[\w-]+\.md)(?:#([\w-]+))?")
RELATIVE_LINK = re.compile(r"\]\(((?:\.\./)?[\w./-]*?[\w-]+\.md)(?:#([\w-]+))?\)")


def _citations() -> Iterator[tuple[str, Path, str | None]]:
    for path, text in _cited_texts():
        for match in CITATION.finditer(text):
            yield str(path.relative_to(ROOT)), ROOT / "docs" / match.group(1), match.group(2)
        if path.suffix == ".md":
            for match in RELATIVE_LINK.finditer(text):
                target = (path.parent / match.group(1)).resolve()
                yield str(path.relative_to(ROOT)), target, match.group(2)


@pytest.mark.parametrize("page", sorted(REFERENCE.glob("*.md")), ids=lambda page: page.name)
def test_each_reference_page_is_listed_in_the_index(page: Path) -> None:
    assert f"]({page.name})" in _page("README.md") or page.name == "README.md"


def test_every_citation_and_link_lands_on_an_existing_page_and_section() -> None:
    broken = []
    for source, target, anchor in _citations():
        if not target.is_file():
            broken.append(f"{source} -> {target.relative_to(ROOT)} (no such page)")
        elif anchor and anchor not in _anchors(target):
            broken.append(f"{source} -> {target.relative_to(ROOT)}#{anchor} (no such section)")
    assert not broken, "\n".join(broken)


# The guides that still share a name with their reference page. Each holds only what the
# reference page does not say (walk-throughs, how the part is built and tested) and links
# there for the rest; the next step folds it in or renames it for what it explains. The set
# may only shrink: the test fails on a new twin and on a name that is no longer one.
GUIDES_BESIDE_THEIR_REFERENCE = {"skills.md", "telegram.md"}


def test_no_topic_has_a_guide_and_a_reference_page_of_the_same_name() -> None:
    guides = {page.name for page in (ROOT / "docs").glob("*.md")}
    twins = guides & {page.name for page in REFERENCE.glob("*.md")}
    assert twins <= GUIDES_BESIDE_THEIR_REFERENCE, (
        f"one page per topic: {sorted(twins - GUIDES_BESIDE_THEIR_REFERENCE)} exist both in "
        "docs/ and docs/reference/; keep the contract in docs/reference/, fold the rest in"
    )
    assert twins == GUIDES_BESIDE_THEIR_REFERENCE, (
        f"{sorted(GUIDES_BESIDE_THEIR_REFERENCE - twins)} no longer have a twin: drop them "
        "from GUIDES_BESIDE_THEIR_REFERENCE"
    )
