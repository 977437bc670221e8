"""The fake GitHub's git data answers as GitHub does, read with the real PyGithub client:
real git object ids, trees, blobs, contents, archives, refs, and GitHub's auth rules."""

from __future__ import annotations

import asyncio
import base64
import io
import subprocess
import tarfile
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from github import Auth, Github, GithubException

from tests.fakes.github import FakeGitHub
from tests.fakes.skills_repo import BRAND_MD, LAYOUT, REPO, publish


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        publish(server)
        yield server


def client(fake: FakeGitHub, token: str | None = None) -> Github:
    return Github(auth=Auth.Token(token) if token else None, base_url=fake.base_url, retry=None)


def _read(fake: FakeGitHub) -> dict[str, object]:
    gh = client(fake)
    repo = gh.get_repo(REPO)
    commit = repo.get_commit(repo.default_branch)
    tree = repo.get_git_tree(commit.commit.tree.sha, recursive=True)
    top = repo.get_git_tree(commit.commit.tree.sha)
    blob = next(e for e in tree.tree if e.path == "skills/brand-voice/SKILL.md")
    folder = repo.get_contents("skills", ref=commit.sha)
    file = repo.get_contents("skills/brand-voice/SKILL.md", ref=commit.sha)
    assert not isinstance(file, list) and isinstance(folder, list)
    return {
        "commit": commit.sha,
        "tree": commit.commit.tree.sha,
        "paths": sorted(e.path for e in tree.tree if e.type == "blob"),
        "top": sorted(e.path for e in top.tree),
        "blob": blob.sha,
        "blob_text": base64.b64decode(repo.get_git_blob(blob.sha).content),
        "folder": sorted(e.path for e in folder),
        "file": file.decoded_content,
        "tarball": repo.get_archive_link("tarball", commit.sha),
        "zipball": repo.get_archive_link("zipball"),
    }


async def test_trees_blobs_contents_and_archives(fake: FakeGitHub, tmp_path: Path) -> None:
    read = await asyncio.to_thread(_read, fake)
    head = fake.git[REPO].refs["heads/main"]
    assert read["commit"] == head
    assert read["paths"] == sorted(LAYOUT)
    assert read["top"] == ["README.md", "skills"]
    assert read["blob_text"] == read["file"] == BRAND_MD.encode()
    assert read["folder"] == [
        f"skills/{n}" for n in ("brand-voice", "pdf-tools", "sneaky", "tea-timer")
    ]
    # The ids are git's own: git computes the same for the same content.
    git = subprocess.run(
        ["git", "hash-object", "--stdin"], input=BRAND_MD.encode(), capture_output=True, check=True
    )
    assert read["blob"] == git.stdout.decode().strip()
    assert read["tarball"] == f"{fake.base_url}/codeload/{REPO}/legacy.tar.gz/{head}"
    async with httpx.AsyncClient() as http:
        tarball = (await http.get(str(read["tarball"]))).content
        zipball = (await http.get(str(read["zipball"]))).content
    top = f"octo-agent-skills-{head[:7]}"
    with tarfile.open(fileobj=io.BytesIO(tarball)) as archive:
        script = archive.getmember(f"{top}/skills/pdf-tools/scripts/extract.py")
        assert script.mode == 0o755 and len(archive.getmembers()) == len(LAYOUT)
    with zipfile.ZipFile(io.BytesIO(zipball)) as archive:
        assert archive.read(f"{top}/skills/brand-voice/SKILL.md") == BRAND_MD.encode()


def _status(call: object) -> int:
    try:
        assert callable(call)
        call()
    except GithubException as exc:
        return exc.status
    return 200


async def test_auth_and_not_found_are_strict(fake: FakeGitHub) -> None:
    head = fake.git[REPO].refs["heads/main"]

    def statuses() -> dict[str, int]:
        anonymous, owner, wrong = client(fake), client(fake, fake.token), client(fake, "wrong")
        return {
            "anonymous": _status(lambda: anonymous.get_repo(REPO).get_commit("main").sha),
            "wrong token": _status(lambda: wrong.get_repo(REPO)),
            "anonymous me": _status(lambda: anonymous.get_user().login),
            "unknown ref": _status(lambda: owner.get_repo(REPO).get_commit("nope").sha),
            "unknown blob": _status(lambda: owner.get_repo(REPO).get_git_blob("0" * 40)),
            "unknown path": _status(lambda: owner.get_repo(REPO).get_contents("nope")),
            "short sha": _status(lambda: owner.get_repo(REPO).get_commit(head[:7]).sha),
        }

    assert await asyncio.to_thread(statuses) == {
        "anonymous": 200, "wrong token": 401, "anonymous me": 401, "unknown ref": 422,
        "unknown blob": 404, "unknown path": 404, "short sha": 200,
    }  # fmt: skip
    fake.repos[REPO].private = True

    def private() -> tuple[int, int]:
        return (
            _status(lambda: client(fake).get_repo(REPO).get_commit("main").sha),
            _status(lambda: client(fake, fake.token).get_repo(REPO).get_commit("main").sha),
        )

    assert await asyncio.to_thread(private) == (404, 200)
