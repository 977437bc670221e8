"""The fake GitHub's git data: commits, refs, trees, blobs, contents and archives.

Object ids are real git ids (sha1 of the object as git stores it), so a client that checks a
blob against its tree entry, as the skill hubs do, checks something real. Paths and JSON shapes
are GitHub's REST API's: `/repos/{o}/{r}/commits/{ref}`, `/git/ref/{ref}`, `/git/commits/{sha}`,
`/git/trees/{sha}?recursive=1`, `/git/blobs/{sha}`, `/contents/{path}?ref=`, and
`/tarball/{ref}` / `/zipball/{ref}` answering 302 to a codeload URL that serves the archive.
An unknown ref is a 422 on `/commits/` and a 404 elsewhere, as on GitHub.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import zipfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.github_json import CREATED, GitHubError, Repo

JSON = dict[str, Any]
Handler = Callable[[web.Request], Awaitable[web.Response]]
FILE_MODE, EXEC_MODE, LINK_MODE, TREE_MODE = "100644", "100755", "120000", "040000"


def git_id(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


@dataclass
class Commit:
    sha: str
    tree: str
    parent: str | None
    message: str
    files: dict[str, bytes]  # path -> content
    modes: dict[str, str]


@dataclass
class Git:
    """One repository's objects and refs."""

    commits: dict[str, Commit] = field(default_factory=dict)
    trees: dict[str, list[JSON]] = field(default_factory=dict)  # sha -> its direct entries
    blobs: dict[str, bytes] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)  # "heads/main", "tags/v1" -> commit sha

    def commit(
        self,
        files: dict[str, str | bytes],
        branch: str,
        message: str,
        executable: frozenset[str] = frozenset(),
        symlinks: frozenset[str] = frozenset(),  # their content is the link's target
    ) -> str:
        data = {p: c.encode() if isinstance(c, str) else c for p, c in files.items()}
        modes = {p: EXEC_MODE if p in executable else FILE_MODE for p in data}
        modes |= {p: LINK_MODE for p in symlinks}
        tree = self._tree("", data, modes)
        parent = self.refs.get(f"heads/{branch}")
        lines = [f"tree {tree}", *([f"parent {parent}"] if parent else [])]
        lines += [f"author Octo Cat <octo@example.com> {len(self.commits)} +0000"] * 1
        lines += [f"committer Octo Cat <octo@example.com> {len(self.commits)} +0000"]
        sha = git_id("commit", ("\n".join(lines) + f"\n\n{message}\n").encode())
        self.commits[sha] = Commit(sha, tree, parent, message, data, modes)
        self.refs[f"heads/{branch}"] = sha
        return sha

    def _tree(self, prefix: str, data: dict[str, bytes], modes: dict[str, str]) -> str:
        entries: list[JSON] = []
        names = sorted({p[len(prefix) :].split("/")[0] for p in data if p.startswith(prefix)})
        for name in names:
            path = prefix + name
            if path in data:
                blob = git_id("blob", data[path])
                self.blobs[blob] = data[path]
                entries.append({"name": name, "mode": modes[path], "type": "blob", "sha": blob})
            else:
                sub = self._tree(f"{path}/", data, modes)
                entries.append({"name": name, "mode": TREE_MODE, "type": "tree", "sha": sub})
        # git orders a tree's entries by name, a subtree's name as if it ended in "/"
        entries.sort(key=lambda e: e["name"] + ("/" if e["type"] == "tree" else ""))
        raw = b"".join(
            f"{e['mode'].lstrip('0')} {e['name']}\0".encode() + bytes.fromhex(e["sha"])
            for e in entries
        )
        sha = git_id("tree", raw)
        self.trees[sha] = entries
        return sha

    def resolve(self, ref: str) -> Commit | None:
        """A branch, a tag, a full commit id or an unambiguous prefix of at least 7."""
        for name in (f"heads/{ref}", f"tags/{ref}"):
            if name in self.refs:
                return self.commits[self.refs[name]]
        if len(ref) >= 7:
            found = [c for sha, c in self.commits.items() if sha.startswith(ref.lower())]
            if len(found) == 1:
                return found[0]
        return None


class GitRoutes:
    """Mixed into FakeGitHub: the git data routes and the calls tests make to lay out history."""

    base_url: str
    repos: dict[str, Repo]
    git: dict[str, Git]

    def _repo_of(self, request: web.Request) -> Repo:
        raise NotImplementedError

    def commit(
        self,
        full_name: str,
        files: dict[str, str | bytes],
        branch: str | None = None,
        message: str = "update",
        executable: frozenset[str] = frozenset(),
        symlinks: frozenset[str] = frozenset(),
    ) -> str:
        """A new commit holding exactly `files`, on `branch` (default: the default branch)."""
        repo = self.repos[full_name]
        branch = branch or repo.default_branch
        repo.branches.add(branch)
        git = self.git.setdefault(full_name, Git())
        return git.commit(files, branch, message, executable, symlinks)

    def tag(self, full_name: str, tag: str, sha: str) -> None:
        self.git[full_name].refs[f"tags/{tag}"] = sha

    def git_routes(self) -> list[tuple[str, str, Handler]]:
        repo = "/repos/{owner}/{repo}"
        return [
            ("GET", f"{repo}/commits/{{ref}}", self._commit),
            ("GET", f"{repo}/git/ref/{{ref:.+}}", self._ref),
            ("GET", f"{repo}/git/commits/{{sha}}", self._git_commit),
            ("GET", f"{repo}/git/trees/{{sha}}", self._tree),
            ("GET", f"{repo}/git/blobs/{{sha}}", self._blob),
            ("GET", f"{repo}/contents", self._contents),
            ("GET", f"{repo}/contents/{{path:.*}}", self._contents),
            ("GET", f"{repo}/{{kind:tarball|zipball}}", self._archive_link),
            ("GET", f"{repo}/{{kind:tarball|zipball}}/{{ref}}", self._archive_link),
            (
                "GET",
                "/codeload/{owner}/{repo}/{kind:legacy.tar.gz|legacy.zip}/{sha}",
                self._archive,
            ),
        ]

    # -- helpers ------------------------------------------------------------------------
    def _git_of(self, request: web.Request) -> tuple[Repo, Git]:
        repo = self._repo_of(request)  # 404 for a repository this caller cannot see
        return repo, self.git.setdefault(repo.full_name, Git())

    def _api(self, repo: Repo) -> str:
        return f"{self.base_url}/repos/{repo.full_name}"

    def _person(self) -> JSON:
        return {"name": "Octo Cat", "email": "octo@example.com", "date": CREATED}

    def _git_commit_shape(self, repo: Repo, commit: Commit) -> JSON:
        api = self._api(repo)
        parents = [commit.parent] if commit.parent else []
        return {
            "sha": commit.sha, "node_id": f"C_{commit.sha[:10]}",
            "url": f"{api}/git/commits/{commit.sha}", "author": self._person(),
            "committer": self._person(), "message": commit.message,
            "tree": {"sha": commit.tree, "url": f"{api}/git/trees/{commit.tree}"},
            "parents": [{"sha": p, "url": f"{api}/git/commits/{p}"} for p in parents],
            "verification": {"verified": False, "reason": "unsigned"},
        }  # fmt: skip

    # -- routes -------------------------------------------------------------------------
    async def _commit(self, request: web.Request) -> web.Response:
        repo, git = self._git_of(request)
        ref = request.match_info["ref"]
        commit = git.resolve(ref)
        if commit is None:
            raise GitHubError(422, f"No commit found for SHA: {ref}")
        api = self._api(repo)
        return web.json_response({
            "sha": commit.sha, "node_id": f"C_{commit.sha[:10]}",
            "commit": self._git_commit_shape(repo, commit) | {"comment_count": 0},
            "url": f"{api}/commits/{commit.sha}",
            "html_url": f"{self.base_url}/web/{repo.full_name}/commit/{commit.sha}",
            "comments_url": f"{api}/commits/{commit.sha}/comments",
            "author": None, "committer": None,
            "parents": self._git_commit_shape(repo, commit)["parents"],
            "stats": {"total": 0, "additions": 0, "deletions": 0}, "files": [],
        })  # fmt: skip

    async def _ref(self, request: web.Request) -> web.Response:
        repo, git = self._git_of(request)
        ref = request.match_info["ref"]
        if ref not in git.refs:
            raise GitHubError(404, "Not Found")
        sha = git.refs[ref]
        return web.json_response({
            "ref": f"refs/{ref}", "node_id": f"REF_{sha[:10]}",
            "url": f"{self._api(repo)}/git/refs/{ref}",
            "object": {"sha": sha, "type": "commit", "url": f"{self._api(repo)}/git/commits/{sha}"},
        })  # fmt: skip

    async def _git_commit(self, request: web.Request) -> web.Response:
        repo, git = self._git_of(request)
        commit = git.commits.get(request.match_info["sha"])
        if commit is None:
            raise GitHubError(404, "Not Found")
        return web.json_response(self._git_commit_shape(repo, commit))

    async def _tree(self, request: web.Request) -> web.Response:
        repo, git = self._git_of(request)
        sha = request.match_info["sha"]
        if sha not in git.trees:  # GitHub takes any tree-ish: a commit or a ref names its tree
            commit = git.commits.get(sha) or git.resolve(sha)
            if commit is None:
                raise GitHubError(404, "Not Found")
            sha = commit.tree
        # GitHub reads any value of `recursive` as "yes", even 0 or false
        recursive = "recursive" in request.query
        api = self._api(repo)
        items: list[JSON] = []

        def walk(tree: str, prefix: str) -> None:
            for entry in git.trees[tree]:
                path = prefix + entry["name"]
                item = {"path": path, "mode": entry["mode"], "type": entry["type"],
                        "sha": entry["sha"]}  # fmt: skip
                if entry["type"] == "blob":
                    item |= {"size": len(git.blobs[entry["sha"]]),
                             "url": f"{api}/git/blobs/{entry['sha']}"}  # fmt: skip
                else:
                    item["url"] = f"{api}/git/trees/{entry['sha']}"
                items.append(item)
                if recursive and entry["type"] == "tree":
                    walk(entry["sha"], f"{path}/")

        walk(sha, "")
        return web.json_response(
            {"sha": sha, "url": f"{api}/git/trees/{sha}", "tree": items, "truncated": False}
        )

    async def _blob(self, request: web.Request) -> web.Response:
        repo, git = self._git_of(request)
        sha = request.match_info["sha"]
        if sha not in git.blobs:
            raise GitHubError(404, "Not Found")
        data = git.blobs[sha]
        return web.json_response({
            "sha": sha, "node_id": f"B_{sha[:10]}", "size": len(data),
            "url": f"{self._api(repo)}/git/blobs/{sha}",
            "content": base64.encodebytes(data).decode(), "encoding": "base64",
        })  # fmt: skip

    async def _contents(self, request: web.Request) -> web.Response:
        repo, git = self._git_of(request)
        commit = git.resolve(request.query.get("ref", repo.default_branch))
        if commit is None:
            raise GitHubError(404, f"No commit found for the ref {request.query.get('ref')}")
        path = request.match_info.get("path", "").strip("/")
        if path in commit.files:
            return web.json_response(self._content(repo, commit, path, full=True))
        inside = sorted({
            (path + "/" if path else "") + p[len(path) + 1 if path else 0 :].split("/")[0]
            for p in commit.files if not path or p.startswith(f"{path}/")
        })  # fmt: skip
        if not inside:
            raise GitHubError(404, "Not Found")
        return web.json_response([self._content(repo, commit, p) for p in inside])

    def _content(self, repo: Repo, commit: Commit, path: str, full: bool = False) -> JSON:
        api, web_base = self._api(repo), f"{self.base_url}/web/{repo.full_name}"
        is_file = path in commit.files
        data = commit.files.get(path, b"")
        sha = git_id("blob", data) if is_file else git_id("tree", path.encode())
        url = f"{api}/contents/{path}?ref={commit.sha}"
        shape = {
            "type": "file" if is_file else "dir", "size": len(data) if is_file else 0,
            "name": path.rsplit("/", 1)[-1], "path": path, "sha": sha, "url": url,
            "git_url": f"{api}/git/{'blobs' if is_file else 'trees'}/{sha}",
            "html_url": f"{web_base}/{'blob' if is_file else 'tree'}/{commit.sha}/{path}",
            "download_url": f"{self.base_url}/raw/{repo.full_name}/{commit.sha}/{path}"
            if is_file else None,
        }  # fmt: skip
        shape["_links"] = {"self": url, "git": shape["git_url"], "html": shape["html_url"]}  # type: ignore[assignment]
        if full:
            shape |= {"content": base64.encodebytes(data).decode(), "encoding": "base64"}
        return shape

    async def _archive_link(self, request: web.Request) -> web.Response:
        repo, git = self._git_of(request)
        commit = git.resolve(request.match_info.get("ref", repo.default_branch))
        if commit is None:
            raise GitHubError(404, "Not Found")
        kind = "legacy.tar.gz" if request.match_info["kind"] == "tarball" else "legacy.zip"
        location = f"{self.base_url}/codeload/{repo.full_name}/{kind}/{commit.sha}"
        return web.Response(status=302, headers={"Location": location})

    async def _archive(self, request: web.Request) -> web.Response:
        repo, git = self._git_of(request)
        commit = git.commits.get(request.match_info["sha"])
        if commit is None:
            raise GitHubError(404, "Not Found")
        top = f"{repo.owner}-{repo.name}-{commit.sha[:7]}"
        buffer = io.BytesIO()
        if request.match_info["kind"] == "legacy.zip":
            with zipfile.ZipFile(buffer, "w") as archive:
                for path, data in sorted(commit.files.items()):
                    archive.writestr(f"{top}/{path}", data)
            kind = "application/zip"
        else:
            with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
                for path, data in sorted(commit.files.items()):
                    info = tarfile.TarInfo(f"{top}/{path}")
                    info.size = len(data)
                    info.mode = 0o755 if commit.modes[path] == EXEC_MODE else 0o644
                    if commit.modes[path] == LINK_MODE:
                        info.type, info.linkname, info.size = tarfile.SYMTYPE, data.decode(), 0
                    archive.addfile(info, io.BytesIO(data))
            kind = "application/x-gzip"
        return web.Response(body=buffer.getvalue(), content_type=kind)
