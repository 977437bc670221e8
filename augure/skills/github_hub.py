"""GitHub hubs (docs/reference/skills.md#hubs): skills in the Agent Skills format, read from one
commit of a repository through the GitHub API.

The hub's REF (or the default branch) is resolved to a commit once; the tree and every blob
are then read at that commit, and each blob is checked against the git object id the tree
gave, so the files installed are exactly the commit's, whatever the branch does meanwhile.
PyGithub is blocking: each hub read runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import posixpath
from dataclasses import dataclass

import requests
from github import GithubException

from augure.common.hubspec import GitHubHub
from augure.skills.hub import MAX_FILE_BYTES, HubError
from augure.skills.model import SKILL_MD, plain_file_name, valid_id
from augure.tools.github.actions import client, message_of

TIMEOUT_SECONDS = 20
MAX_FILES = 100  # per skill
MAX_SKILL_BYTES = 2 * 1024 * 1024
BLOB_MODES = {"100644", "100755"}  # a symlink (120000) or submodule (160000) is refused


@dataclass(frozen=True)
class TreeEntry:
    path: str  # in the repository
    sha: str  # the git blob id
    size: int
    mode: str


@dataclass(frozen=True)
class Snapshot:
    """A hub at one commit: each skill id and the folder holding its SKILL.md."""

    commit: str
    folders: dict[str, str]
    entries: list[TreeEntry]

    def skill_entries(self, skill_id: str) -> dict[str, TreeEntry]:
        """The skill's files, by path inside its folder."""
        folder = self.folders[skill_id]
        prefix = f"{folder}/" if folder else ""
        return {e.path[len(prefix) :]: e for e in self.entries if e.path.startswith(prefix)}


@dataclass(frozen=True)
class GitHubSkill:
    id: str
    commit: str
    folder: str
    files: dict[str, bytes]  # path inside the skill's folder -> bytes


@dataclass(frozen=True)
class Unchanged:
    """The hub is still at the commit the skill was installed from: nothing more was read."""

    commit: str


async def fetch(
    hub: GitHubHub, skill_id: str, base_url: str, token: str | None, installed: str | None = None
) -> GitHubSkill | Unchanged | None:
    """The skill's files at the hub's current commit, `Unchanged` when that is `installed`
    (the commit the skill was installed from), or None if the hub has no such skill."""
    if not valid_id(skill_id):
        raise HubError(f"invalid skill id {skill_id!r}")
    return await asyncio.to_thread(_blocking, hub, base_url, token, skill_id, installed)


def _blocking(
    hub: GitHubHub, base_url: str, token: str | None, skill_id: str, installed: str | None
) -> GitHubSkill | Unchanged | None:
    gh = client(base_url, token, lazy=False, timeout=TIMEOUT_SECONDS)
    try:
        repo = gh.get_repo(f"{hub.owner}/{hub.repo}")
        commit = repo.get_commit(hub.ref or repo.default_branch)
        if commit.sha == installed:
            return Unchanged(commit.sha)  # no tree, no files: an update check's usual answer
        tree = repo.get_git_tree(commit.commit.tree.sha, recursive=True)
        if tree.raw_data.get("truncated"):
            raise HubError(f"hub {hub.name}: the repository's tree is too large to list")
        entries = [
            TreeEntry(item.path, item.sha, item.size or 0, item.mode)
            for item in tree.tree
            if item.type == "blob" or item.mode in ("120000", "160000")
        ]
        taken = Snapshot(commit.sha, _folders(hub, entries), entries)
        if skill_id not in taken.folders:
            return None
        files = {}
        for path, entry in _checked(skill_id, taken.skill_entries(skill_id)).items():
            files[path] = _blob(repo.get_git_blob(entry.sha).content, entry, skill_id)
        return GitHubSkill(skill_id, taken.commit, taken.folders[skill_id], files)
    except GithubException as exc:
        raise HubError(_explain(hub, exc)) from None
    except requests.RequestException as exc:
        # The base URL is the owner's setting, never a secret: the token is in a header.
        raise HubError(f"cannot reach GitHub at {base_url}: {type(exc).__name__}") from None
    finally:
        gh.close()


def _folders(hub: GitHubHub, entries: list[TreeEntry]) -> dict[str, str]:
    """Every folder under the hub's PATH whose SKILL.md makes it a skill, by its name."""
    prefix = f"{hub.path}/" if hub.path else ""
    folders: dict[str, str] = {}
    twice: set[str] = set()
    for entry in entries:
        if posixpath.basename(entry.path) != SKILL_MD or not entry.path.startswith(prefix):
            continue
        folder = posixpath.dirname(entry.path)
        skill_id = posixpath.basename(folder)
        if not valid_id(skill_id):
            continue  # not a name a skill can have: never offered
        if skill_id in folders:
            twice.add(skill_id)
        folders[skill_id] = folder
    # Two folders of one name: which one is meant cannot be told, so neither is offered.
    return {k: v for k, v in folders.items() if k not in twice}


def _checked(skill_id: str, entries: dict[str, TreeEntry]) -> dict[str, TreeEntry]:
    if len(entries) > MAX_FILES:
        raise HubError(f"skill {skill_id}: more than {MAX_FILES} files; refused")
    total = 0
    for path, entry in entries.items():
        if entry.mode not in BLOB_MODES:
            raise HubError(f"skill {skill_id}: {path} is a symlink or submodule; refused")
        if not plain_file_name(path):
            raise HubError(f"skill {skill_id}: the file name {path[:80]!r} is refused")
        if entry.size > MAX_FILE_BYTES:
            raise HubError(f"skill {skill_id}: {path} is over {MAX_FILE_BYTES // 1024} KiB")
        total += entry.size
    if total > MAX_SKILL_BYTES:
        raise HubError(f"skill {skill_id}: over {MAX_SKILL_BYTES // 1024} KiB in all")
    return entries


def _blob(content: str | None, entry: TreeEntry, skill_id: str) -> bytes:
    data = base64.b64decode(content or "")
    header = f"blob {len(data)}\0".encode()
    if hashlib.sha1(header + data, usedforsecurity=False).hexdigest() != entry.sha:
        raise HubError(f"skill {skill_id}: {entry.path} does not match its git object id")
    return data


def _explain(hub: GitHubHub, exc: GithubException) -> str:
    message = " ".join(message_of(exc).split())[:200]
    if exc.status == 404:
        what = f"{hub.name}@{hub.ref}" if hub.ref else hub.name
        return f"hub {what}: not found on GitHub (a private repository needs [tools.github] token)"
    if exc.status == 401:
        return f"hub {hub.name}: GitHub refused the token (401 {message})"
    if exc.status in (403, 429) and "rate limit" in message.lower():
        return f"hub {hub.name}: GitHub rate limit exceeded; set [tools.github] token or wait"
    if exc.status == 422:
        return f"hub {hub.name}: no branch, tag or commit {hub.ref!r} ({message})"
    return f"hub {hub.name}: GitHub error {exc.status}: {message}"
