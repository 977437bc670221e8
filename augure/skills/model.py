"""What a skill is on disk (docs/reference/skills.md#on-disk): `SKILL.md` front matter and body,
`skill.py`, `test.json`.

Parsing only: nothing here touches the filesystem or the database. Every id is checked with
`check_id` before any path is built from it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from augure.common.errors import NotDone
from augure.scheduler.jobs import JobError, cron_trigger

# The hubs' download code (augure/skills/hub.py) loads at the first install, not at the bot's
# start (docs/performance.md): what makes a valid id is here.
SKILL_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_ID_LENGTH = 64
SKILL_MD = "SKILL.md"
SKILL_PY = "skill.py"
TEST_JSON = "test.json"
FILES = (SKILL_MD, SKILL_PY, TEST_JSON)
VERSION = re.compile(r"^\d+(\.\d+){0,2}$")
MAX_DESCRIPTION = 1024  # the Agent Skills format's limit
# A skill's other files (scripts/, references/, assets): plain names, no dot-files, not deep.
FILE_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
MAX_DEPTH = 6
MAX_COMPANION_CHARS = 48_000  # of a skill's other files in its turn's prompt

State = Literal["draft", "testing", "active", "paused", "broken"]


class SkillError(NotDone):
    """A skill (or an id) that cannot be used as given; the message is fit for the owner."""


def valid_id(value: object) -> bool:
    return isinstance(value, str) and len(value) <= MAX_ID_LENGTH and bool(SKILL_ID.match(value))


def check_id(skill_id: object) -> str:
    """The id itself, or SkillError: lowercase words joined by hyphens, at most 64 characters."""
    if not valid_id(skill_id):
        shown = repr(skill_id)[:80]
        raise SkillError(
            f"invalid skill id {shown}: lowercase letters and digits in words joined by single "
            f"hyphens, at most {MAX_ID_LENGTH} characters"
        )
    assert isinstance(skill_id, str)  # valid_id checked it
    return skill_id


def plain_file_name(name: str) -> bool:
    """A path inside a skill's folder that cannot leave it: `scripts/run.py`, not `../x`."""
    parts = name.split("/")
    return len(parts) <= MAX_DEPTH and all(FILE_SEGMENT.match(part) for part in parts)


@dataclass
class Catalog:
    """The active skills, a line each, for the system prompt's stable part: the skill
    service keeps it current, the agent reads it when it builds a prompt."""

    text: str = ""


@dataclass(frozen=True)
class SkillMeta:
    name: str
    description: str
    version: str = "0.1.0"
    trigger: Literal["manual", "cron"] = "manual"
    schedule: str | None = None
    timezone: str | None = None
    tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    body: str = ""
    # The Agent Skills format's optional keys, read and shown; `allowed_tools` counts as
    # declared tools where a name is one of Augure's (docs/reference/skills.md#hubs).
    license: str | None = None
    allowed_tools: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)

    def declared(self, known: Collection[str]) -> tuple[str, ...]:
        """`tools`, then each `allowed-tools` name that is a tool here."""
        mapped = (name for name in self.allowed_tools if name in known)
        return tuple(dict.fromkeys((*self.tools, *mapped)))


@dataclass(frozen=True)
class VettedSkill:
    """A hub skill fetched, hash-checked, parsed and scanned: what the owner approves."""

    meta: SkillMeta
    files: dict[str, bytes]
    verdict: str
    hub: str | None = None  # the hub entry it comes from
    revision: str | None = None  # the commit, for a GitHub hub: pinned at install
    known: frozenset[str] = frozenset()  # this Augure's tools, to map allowed-tools
    changes: dict[str, list[str]] | None = None  # against the installed files, for an update

    @property
    def digest(self) -> str:
        """sha256 over every file's name and bytes: the bundle, as installed."""
        bundle = hashlib.sha256()
        for name in sorted(self.files):
            bundle.update(f"{name}\0{hashlib.sha256(self.files[name]).hexdigest()}\n".encode())
        return bundle.hexdigest()

    def summary(self) -> dict[str, Any]:
        """Everything that will run (docs/reference/approvals.md): what it is, when it runs, what it
        may call, and every file in full with its sha256, so nothing the owner did not see is
        installed."""
        return {
            "skill": self.meta.name,
            "version": self.meta.version,
            "summary": self.meta.description,
            "trigger": self.meta.trigger,
            "schedule": self.meta.schedule,
            "timezone": self.meta.timezone,
            "tools": list(self.meta.declared(self.known)),
            **self._origin(),
            "scan": self.verdict,
            "files": {
                name: {
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "content": data.decode("utf-8", errors="replace"),
                }
                for name, data in sorted(self.files.items())
            },
            "bundle_sha256": self.digest,
        }

    def _origin(self) -> dict[str, Any]:
        shown: dict[str, Any] = {}
        if self.hub is not None:
            shown["hub"] = self.hub
        if self.revision is not None:
            shown["commit"] = self.revision
        if self.meta.allowed_tools:
            allowed = self.meta.allowed_tools
            shown["allowed_tools"] = {
                "mapped": [name for name in allowed if name in self.known],
                "not_mapped": [name for name in allowed if name not in self.known],
            }
        if self.meta.license:
            shown["license"] = self.meta.license
        if self.meta.metadata:
            shown["metadata"] = self.meta.metadata
        if self.changes is not None:
            shown["changes"] = self.changes
        return shown


@dataclass(frozen=True)
class SkillTest:
    answers: dict[str, str] = field(default_factory=dict)
    expect_output_contains: tuple[str, ...] = ()


def parse_skill_md(text: str, expected_id: str | None = None) -> SkillMeta:
    """Front matter between `---` lines, then the body. SkillError names what is wrong."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillError("SKILL.md must start with YAML front matter between '---' lines")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise SkillError("SKILL.md: the front matter has no closing '---'") from None
    # The YAML parser is imported here, not at start: the catalog a start builds is kept
    # (SkillStore.catalog), so a running bot may never parse a SKILL.md (docs/performance.md).
    import yaml

    try:
        front = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise SkillError(f"SKILL.md: the front matter is not valid YAML ({exc})") from None
    if not isinstance(front, dict):
        raise SkillError("SKILL.md: the front matter must be a mapping of keys")
    body = "\n".join(lines[end + 1 :]).strip()
    return _meta(front, body, expected_id)


def _meta(front: dict[str, Any], body: str, expected_id: str | None) -> SkillMeta:
    name = check_id(front.get("name"))
    if expected_id is not None and name != expected_id:
        raise SkillError(f"SKILL.md: name {name!r} differs from the skill id {expected_id!r}")
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("SKILL.md: description is required (one line saying what it does)")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        raise SkillError(f"SKILL.md: description is over {MAX_DESCRIPTION} characters")
    version = str(front.get("version", "0.1.0"))
    if not VERSION.match(version):
        raise SkillError(f"SKILL.md: version {version!r} is not like 1.2.0")
    trigger = front.get("trigger", "manual")
    if trigger not in ("manual", "cron"):
        raise SkillError("SKILL.md: trigger must be 'manual' or 'cron'")
    schedule = front.get("schedule")
    timezone = front.get("timezone")
    if timezone is not None and not isinstance(timezone, str):
        raise SkillError("SKILL.md: timezone must be an IANA name such as Europe/Paris")
    if trigger == "cron":
        if not isinstance(schedule, str):
            raise SkillError("SKILL.md: a cron skill needs schedule (5 fields, e.g. 0 8 * * *)")
        try:
            cron_trigger(schedule, timezone or "UTC")
        except (JobError, KeyError, ValueError) as exc:
            raise SkillError(f"SKILL.md: {exc}") from None
    elif schedule is not None and not isinstance(schedule, str):
        raise SkillError("SKILL.md: schedule must be a 5-field cron string")
    return SkillMeta(
        name=name,
        description=description,
        version=version,
        trigger=trigger,
        schedule=schedule if trigger == "cron" else None,
        timezone=timezone,
        tools=_names(front.get("tools"), "tools"),
        tags=_names(front.get("tags"), "tags"),
        body=body,
        license=_license(front.get("license")),
        allowed_tools=_names(front.get("allowed-tools"), "allowed-tools"),
        metadata=_metadata(front.get("metadata")),
    )


def _license(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise SkillError("SKILL.md: license must be a string (a name or a file)")
    return " ".join(value.split())[:200]


def _metadata(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise SkillError("SKILL.md: metadata must be a mapping of names to values")
    return {k: " ".join(str(v).split())[:200] for k, v in value.items()}


def _names(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part.strip() for part in value.replace(",", " ").split()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SkillError(f"SKILL.md: {key} must be a list of names")
    return tuple(dict.fromkeys(v.strip() for v in value if v.strip()))


def parse_test_json(text: str) -> SkillTest:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SkillError(f"test.json is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise SkillError("test.json must be an object with answers and expect_output_contains")
    answers = data.get("answers", {})
    expected = data.get("expect_output_contains", [])
    if not isinstance(answers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in answers.items()
    ):
        raise SkillError('test.json: answers must map tool names to text ({"tool": "text"})')
    if not isinstance(expected, list) or not all(isinstance(e, str) for e in expected):
        raise SkillError("test.json: expect_output_contains must be a list of strings")
    return SkillTest(dict(answers), tuple(expected))


def render_skill_md(meta: SkillMeta) -> str:
    """SKILL.md text for `meta` (used to bump a repaired skill's version)."""
    front: dict[str, Any] = {"name": meta.name, "description": meta.description}
    front["version"] = meta.version
    front["trigger"] = meta.trigger
    if meta.schedule:
        front["schedule"] = meta.schedule
    if meta.timezone:
        front["timezone"] = meta.timezone
    front["tools"] = list(meta.tools)
    front["tags"] = list(meta.tags)
    import yaml  # on first use, as in parse_skill_md

    dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True).strip()
    return f"---\n{dumped}\n---\n\n{meta.body}\n"


def companions_text(files: dict[str, bytes]) -> str:
    """A skill's other files for its turn's prompt: references to read and scripts, which run
    only through sandbox_exec (so the owner is asked); nothing else ever executes them."""
    if not files:
        return ""
    parts = [
        "\n\n# The skill's other files\nA script here runs only if you pass it to "
        "sandbox_exec (write it into the workspace and run it there in one command)."
    ]
    budget = MAX_COMPANION_CHARS
    for name, data in sorted(files.items()):
        text = data.decode("utf-8", errors="replace")
        if len(text) > budget:
            parts.append(f"## {name}\n(not shown: past the {MAX_COMPANION_CHARS} characters kept)")
            continue
        budget -= len(text)
        parts.append(f"## {name}\n```\n{text}\n```")
    return "\n\n".join(parts)


def bump(version: str) -> str:
    """The next patch version: 1.2.0 → 1.2.1, 2 → 2.0.1."""
    parts = [int(p) for p in version.split(".")] if VERSION.match(version) else [0, 1, 0]
    parts += [0] * (3 - len(parts))
    parts[2] += 1
    return ".".join(str(p) for p in parts)
