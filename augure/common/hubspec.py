"""What a `[skills] hubs` entry names (docs/reference/skills.md#hubs): a manifest hub's base
URL, or a GitHub repository `github:OWNER/REPO[/PATH][@REF]`.

Parsed strictly, here below both the config (which refuses a bad entry at load) and the skills
(which fetch from it): every part is checked against what GitHub itself accepts before it goes
into a URL, so an entry cannot reach another path of the API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from augure.common.errors import UsageError
from augure.common.links import without_login

GITHUB_PREFIX = "github:"
MANIFEST_SCHEMES = ("http://", "https://", "file://")
OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")  # GitHub's login rule
REPO = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
SEGMENT = re.compile(r"^[A-Za-z0-9._-]{1,255}$")
REF = re.compile(r"^[A-Za-z0-9._-][A-Za-z0-9._/-]{0,199}$")
FORM = "github:OWNER/REPO[/PATH][@REF]"


class HubSpecError(UsageError, ValueError):  # ValueError: raised in a config validator
    """A hub entry that names nothing usable; the message is one line, fit for the owner."""


@dataclass(frozen=True)
class GitHubHub:
    owner: str
    repo: str
    path: str  # "" for the repository's root; never with a leading or trailing "/"
    ref: str | None  # a branch, tag or commit; None: the repository's default branch

    @property
    def name(self) -> str:
        """What `--hub` matches: OWNER/REPO[/PATH]."""
        return "/".join(part for part in (self.owner, self.repo, self.path) if part)

    @property
    def spec(self) -> str:
        return f"{GITHUB_PREFIX}{self.name}" + (f"@{self.ref}" if self.ref else "")


@dataclass(frozen=True)
class ManifestHub:
    url: str

    @property
    def name(self) -> str:
        """The URL without user or password (such a hub is refused, but still named)."""
        return without_login(self.url)

    @property
    def spec(self) -> str:
        return self.url


Hub = GitHubHub | ManifestHub


def parse_hub(text: object) -> Hub:
    """The hub an entry names, or HubSpecError saying what is wrong with it."""
    if not isinstance(text, str) or not text.strip():
        raise HubSpecError(f"a hub is a manifest URL or {FORM}, not {clipped(text)}")
    entry = text.strip()
    if entry.startswith(MANIFEST_SCHEMES):
        return ManifestHub(entry)
    if not entry.startswith(GITHUB_PREFIX):
        raise HubSpecError(
            f"hub {clipped(entry)} is neither a manifest URL (https://, http://, file://) "
            f"nor {FORM}"
        )
    where, at, ref = entry[len(GITHUB_PREFIX) :].partition("@")
    parts = where.split("/")
    if len(parts) < 2:
        raise HubSpecError(f"hub {clipped(entry)}: expected {FORM}")
    owner, repo, path = parts[0], parts[1], parts[2:]
    if not OWNER.match(owner) or owner.endswith("-"):
        raise HubSpecError(f"hub {clipped(entry)}: {clipped(owner)} is not a GitHub owner name")
    if not REPO.match(repo) or repo in (".", ".."):
        raise HubSpecError(f"hub {clipped(entry)}: {clipped(repo)} is not a repository name")
    for segment in path:
        if not SEGMENT.match(segment) or segment in (".", ".."):
            raise HubSpecError(
                f"hub {clipped(entry)}: the path segment {clipped(segment)} is not a folder name"
            )
    if at and not _good_ref(ref):
        raise HubSpecError(f"hub {clipped(entry)}: {clipped(ref)} is not a branch, tag or commit")
    return GitHubHub(owner, repo, "/".join(path), ref or None)


def _good_ref(ref: str) -> bool:
    # git's own rules for a ref name, as far as they matter in a URL path
    return bool(
        REF.match(ref)
        and ".." not in ref
        and "//" not in ref
        and not ref.endswith(("/", ".", ".lock"))
    )


def clipped(value: object, limit: int = 60) -> str:
    """`value` as a message quotes what someone else wrote (a config entry, a hub's manifest):
    its repr, on one line, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
