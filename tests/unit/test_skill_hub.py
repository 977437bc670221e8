"""Skill hubs over real files and a real loopback HTTP server, with the real SSRF guard."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from augure.skills import hub
from augure.skills.hub import MAX_FILE_BYTES, HubError, HubSkill, fetch_manifest, fetch_skill, newer
from augure.tools.netguard import check_url

SKILL_MD = b"---\nname: demo\ndescription: A demo.\nversion: 1.2.0\n---\nSay hello.\n"
SKILL_PY = b"import api\nprint(api.memory_read(path='notes.md'))\n"
TRAP = b"print('this file is not in the manifest and must never be read')\n"

# Every file opened in this process, seen through the interpreter's audit hook: whichever
# way the code opens a file (open, os.open, Path.read_bytes), the "open" event fires.
_RECORDERS: list[list[str]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _RECORDERS and isinstance(args[0], str | bytes | os.PathLike):
        for recorder in _RECORDERS:
            recorder.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_hub(root: Path, files: dict[str, bytes], listed: list[str] | None = None) -> Path:
    """A hub with one skill `demo`; the manifest lists `listed` (default: every file)."""
    folder = root / "skills" / "demo"
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    entry = {
        "id": "demo",
        "version": "1.2.0",
        "description": "A demo skill",
        "files": {name: sha(files[name]).upper() for name in listed or files},
    }
    write_manifest(root, [entry])
    return root


def write_manifest(root: Path, entries: list[Any]) -> None:
    (root / "manifest.json").write_text(json.dumps({"skills": entries}))


def relative_opens(seen: list[str], root: Path) -> list[str]:
    return [Path(p).relative_to(root).as_posix() for p in seen if Path(p).is_relative_to(root)]


@pytest.fixture
def recorder() -> Iterator[list[str]]:
    seen: list[str] = []
    _RECORDERS.append(seen)
    yield seen
    _RECORDERS.remove(seen)


# -- file:// hubs --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", "/"])
async def test_a_file_hub_serves_its_manifest_and_verified_files(
    tmp_path: Path, suffix: str
) -> None:
    root = make_hub(tmp_path / "hub", {"SKILL.md": SKILL_MD, "skill.py": SKILL_PY})
    url = root.as_uri() + suffix
    [skill] = await fetch_manifest(url)
    assert skill == HubSkill(
        "demo", "1.2.0", "A demo skill", {"SKILL.md": sha(SKILL_MD), "skill.py": sha(SKILL_PY)}
    )
    assert await fetch_skill(url, skill) == {"SKILL.md": SKILL_MD, "skill.py": SKILL_PY}


async def test_a_file_that_does_not_match_its_hash_is_refused(tmp_path: Path) -> None:
    root = make_hub(tmp_path / "hub", {"SKILL.md": SKILL_MD, "skill.py": SKILL_PY})
    [skill] = await fetch_manifest(root.as_uri())
    (root / "skills" / "demo" / "skill.py").write_bytes(SKILL_PY + b"print('extra')\n")
    with pytest.raises(HubError) as caught:
        await fetch_skill(root.as_uri(), skill)
    assert str(caught.value) == "skill demo: skill.py does not match its sha256 in the manifest"


async def test_only_the_listed_files_are_ever_opened(tmp_path: Path, recorder: list[str]) -> None:
    files = {"SKILL.md": SKILL_MD, "skill.py": TRAP, "test.json": TRAP}
    root = make_hub(tmp_path / "hub", files, listed=["SKILL.md"])
    recorder.clear()  # the setup's own writes
    [skill] = await fetch_manifest(root.as_uri())
    assert await fetch_skill(root.as_uri(), skill) == {"SKILL.md": SKILL_MD}
    # The hook does see this code's reads (both appear), so the trap's absence means something.
    assert relative_opens(recorder, tmp_path) == ["hub/manifest.json", "hub/skills/demo/SKILL.md"]


BAD_IDS = ["../evil", "demo/../../x", "a/b", "Demo", "a" * 65, "-demo", "demo--x", "demo ", ""]


@pytest.mark.parametrize("bad", BAD_IDS)
async def test_invalid_ids_are_refused_before_any_path_is_built(
    tmp_path: Path, recorder: list[str], bad: str
) -> None:
    root = make_hub(tmp_path / "hub", {"SKILL.md": SKILL_MD})
    write_manifest(root, [{"id": bad, "version": "1.0.0", "description": "", "files": {}}])
    recorder.clear()
    with pytest.raises(HubError, match="invalid skill id") as caught:
        await fetch_manifest(root.as_uri())
    assert repr(bad)[:20] in str(caught.value)

    skill = HubSkill(bad, "1.0.0", "", {"SKILL.md": sha(SKILL_MD)})
    with pytest.raises(HubError, match="invalid skill id"):
        await fetch_skill(root.as_uri(), skill)
    assert relative_opens(recorder, tmp_path) == ["hub/manifest.json"]


async def test_file_names_outside_the_allowed_three_are_refused_unread(
    tmp_path: Path, recorder: list[str]
) -> None:
    root = make_hub(tmp_path / "hub", {"SKILL.md": SKILL_MD})
    recorder.clear()
    for name in ("../../manifest.json", "run.sh"):
        skill = HubSkill("demo", "1.0.0", "", {"SKILL.md": sha(SKILL_MD), name: sha(b"")})
        with pytest.raises(
            HubError, match=re.escape("is not one of SKILL.md, skill.py, test.json")
        ):
            await fetch_skill(root.as_uri(), skill)
    assert recorder == []


@pytest.mark.parametrize("link", ["skills/demo/skill.py", "skills/demo", "skills", "manifest.json"])
async def test_symlinks_that_leave_the_hub_are_refused(
    tmp_path: Path, recorder: list[str], link: str
) -> None:
    """The outside copy is a perfect hub of its own: only the folder check can refuse it."""
    outside = make_hub(tmp_path / "outside", {"SKILL.md": SKILL_MD, "skill.py": SKILL_PY})
    root = make_hub(tmp_path / "hub", {"SKILL.md": SKILL_MD, "skill.py": SKILL_PY})
    skill = HubSkill("demo", "1.2.0", "", {"SKILL.md": sha(SKILL_MD), "skill.py": sha(SKILL_PY)})
    target = root / link
    if target.is_dir():
        for child in sorted(target.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() else child.unlink()
        target.rmdir()
    else:
        target.unlink()
    target.symlink_to(outside / link)
    recorder.clear()
    with pytest.raises(HubError, match="resolves outside the hub folder"):
        if link == "manifest.json":
            await fetch_manifest(root.as_uri())
        else:
            await fetch_skill(root.as_uri(), skill)
    assert not any(p.startswith("outside") for p in relative_opens(recorder, tmp_path))


async def test_a_symlink_within_the_hub_is_followed(tmp_path: Path) -> None:
    root = make_hub(tmp_path / "hub", {"SKILL.md": SKILL_MD})
    (root / "shared.md").write_bytes(SKILL_MD)
    (root / "skills" / "demo" / "SKILL.md").unlink()
    (root / "skills" / "demo" / "SKILL.md").symlink_to(root / "shared.md")
    [skill] = await fetch_manifest(root.as_uri())
    assert await fetch_skill(root.as_uri(), skill) == {"SKILL.md": SKILL_MD}


async def test_oversized_and_missing_local_files_are_refused(tmp_path: Path) -> None:
    big = SKILL_MD + b"x" * MAX_FILE_BYTES
    root = make_hub(tmp_path / "hub", {"SKILL.md": big})
    [skill] = await fetch_manifest(root.as_uri())
    with pytest.raises(HubError, match=re.escape("SKILL.md is larger than 256 KiB")):
        await fetch_skill(root.as_uri(), skill)
    (root / "skills" / "demo" / "SKILL.md").unlink()
    with pytest.raises(HubError, match=re.escape("the hub has no skills/demo/SKILL.md")):
        await fetch_skill(root.as_uri(), skill)
    with pytest.raises(HubError, match="does not exist"):
        await fetch_manifest((tmp_path / "nowhere").as_uri())


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hub.example/",
        "hub.example/skills",
        "/srv/hub",
        "gopher://x/",
        "file://other-host/hub",
    ],
)
async def test_other_schemes_and_remote_file_urls_are_refused(url: str) -> None:
    with pytest.raises(HubError):
        await fetch_manifest(url)


@pytest.mark.parametrize(
    "url",
    ["http://owner:hunter2@127.0.0.1/hub", "ftp://owner:hunter2@hub.example/", "http://h/?t=1"],
)
async def test_credentials_and_queries_are_refused_without_echoing_them(url: str) -> None:
    with pytest.raises(HubError, match=r"credentials|query|not 'ftp'") as caught:
        await fetch_manifest(url, allow_private=True)
    assert "hunter2" not in str(caught.value) and "t=1" not in str(caught.value)


def entry(**changes: Any) -> dict[str, Any]:
    base = {"id": "demo", "version": "1.0", "description": "d", "files": {"SKILL.md": "a" * 64}}
    return {**base, **changes}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (json.dumps([]).encode(), 'with a "skills" list'),
        (json.dumps({"skills": ["demo"]}).encode(), "every entry of skills must be an object"),
        (json.dumps({"skills": [entry(version="1.x")]}).encode(), "is not like 1.2.0"),
        (json.dumps({"skills": [entry(description=3)]}).encode(), "description must be a string"),
        (json.dumps({"skills": [entry(files=[])]}).encode(), "files must be an object"),
        (json.dumps({"skills": [entry(files={"skill.py": "a" * 64})]}).encode(), "SKILL.md"),
        (
            json.dumps(
                {"skills": [entry(files={"SKILL.md": "a" * 64, "x.sh": "b" * 64})]}
            ).encode(),
            "'x.sh' is not one of",
        ),
        (json.dumps({"skills": [entry(files={"SKILL.md": "g" * 64})]}).encode(), "64 hex"),
        (json.dumps({"skills": [entry(), entry()]}).encode(), "lists skill demo twice"),
    ],
)
async def test_malformed_manifests_are_refused(
    tmp_path: Path, document: bytes, message: str
) -> None:
    (tmp_path / "manifest.json").write_bytes(document)
    with pytest.raises(HubError, match=re.escape(message)):
        await fetch_manifest(tmp_path.as_uri())


# -- http:// hubs -----------------------------------------------------------------------------

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class HubServer:
    """Serves a hub folder on 127.0.0.1; `routes` override paths; `paths` records requests."""

    def __init__(self, folder: Path, tls: ssl.SSLContext | None = None) -> None:
        self.folder = folder
        self.tls = tls
        self.routes: dict[str, Handler] = {}
        self.paths: list[str] = []
        self.root = ""
        self._runner: web.AppRunner | None = None

    async def __aenter__(self) -> HubServer:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.tls)
        await site.start()
        scheme = "https" if self.tls else "http"
        self.root = f"{scheme}://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.paths.append(request.path)
        if request.path in self.routes:
            return await self.routes[request.path](request)
        file = self.folder / request.path.lstrip("/")
        if not file.is_file():
            raise web.HTTPNotFound()
        return web.Response(body=file.read_bytes())


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[HubServer]:
    files = {"SKILL.md": SKILL_MD, "skill.py": SKILL_PY, "test.json": TRAP}
    make_hub(tmp_path / "hub", files, listed=["SKILL.md", "skill.py"])
    async with HubServer(tmp_path / "hub") as running:
        yield running


async def test_an_http_hub_on_loopback_works_when_private_networks_are_allowed(
    server: HubServer,
) -> None:
    [skill] = await fetch_manifest(server.root + "/", allow_private=True)
    files = await fetch_skill(server.root, skill, allow_private=True)
    assert files == {"SKILL.md": SKILL_MD, "skill.py": SKILL_PY}
    assert server.paths == ["/manifest.json", "/skills/demo/SKILL.md", "/skills/demo/skill.py"]


async def test_an_http_hub_on_loopback_is_refused_by_default(server: HubServer) -> None:
    with pytest.raises(HubError, match=r"refused .*127\.0\.0\.1, which is loopback"):
        await fetch_manifest(server.root)
    skill = HubSkill("demo", "1.2.0", "", {"SKILL.md": sha(SKILL_MD)})
    with pytest.raises(HubError, match="which is loopback"):
        await fetch_skill(server.root, skill)
    assert server.paths == []


def redirect(location: str) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(location)

    return handler


async def test_relative_redirects_are_followed_up_to_five(server: HubServer) -> None:
    server.routes["/manifest.json"] = redirect("/v2/manifest.json")
    server.routes["/v2/manifest.json"] = redirect("../manifest-real.json")
    (server.folder / "manifest-real.json").write_bytes(
        (server.folder / "manifest.json").read_bytes()
    )
    [skill] = await fetch_manifest(server.root, allow_private=True)
    assert skill.id == "demo"
    assert server.paths == ["/manifest.json", "/v2/manifest.json", "/manifest-real.json"]

    for hop in range(6):
        server.routes[f"/loop{hop}/manifest.json"] = redirect(f"/loop{hop + 1}/manifest.json")
    with pytest.raises(HubError, match="more than 5 redirects"):
        await fetch_manifest(server.root + "/loop0", allow_private=True)


async def test_a_redirect_to_a_non_public_address_is_refused(
    server: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first hop stands in for a public hub; the hop it redirects to is checked for real."""
    port = server.root.rsplit(":", 1)[1]
    checked: list[str] = []

    async def public_first_hop(url: str, *, allow_private: bool = False) -> str:
        checked.append(url)
        return url if len(checked) == 1 else await check_url(url, allow_private=allow_private)

    monkeypatch.setattr(hub, "check_url", public_first_hop)
    for inside in (
        f"http://localhost:{port}/internal/manifest.json",
        "http://169.254.169.254/latest/meta-data/",
        f"http://[::1]:{port}/internal/manifest.json",
    ):
        checked.clear()
        server.routes["/manifest.json"] = redirect(inside)
        with pytest.raises(HubError, match=f"refused {re.escape(inside)}"):
            await fetch_manifest(server.root)
        assert checked == [f"{server.root}/manifest.json", inside]
    assert "/internal/manifest.json" not in server.paths


async def test_a_redirect_to_another_scheme_is_refused_even_on_a_private_hub(
    server: HubServer,
) -> None:
    server.routes["/manifest.json"] = redirect((server.folder / "manifest.json").as_uri())
    with pytest.raises(HubError, match="only http and https URLs are allowed, not 'file'"):
        await fetch_manifest(server.root, allow_private=True)


async def test_an_oversized_streamed_file_is_aborted(server: HubServer) -> None:
    sent: list[int] = []

    async def endless(request: web.Request) -> web.StreamResponse:
        # Chunked, no Content-Length: only counting the stream can stop it.
        response = web.StreamResponse()
        await response.prepare(request)
        chunk = b"x" * 65536
        try:
            for _ in range(2000):  # 128 MiB if nobody stops reading
                await response.write(chunk)
                sent.append(len(chunk))
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        return response

    server.routes["/skills/demo/skill.py"] = endless
    [skill] = await fetch_manifest(server.root, allow_private=True)
    with pytest.raises(HubError, match=r"skill\.py is larger than 256 KiB; refused"):
        await fetch_skill(server.root, skill, allow_private=True)
    assert sum(sent) < 16 * 1024 * 1024


async def test_a_declared_oversize_and_an_error_status_are_refused(server: HubServer) -> None:
    async def huge_manifest(request: web.Request) -> web.StreamResponse:
        return web.Response(body=b" " * (1024 * 1024 + 1))

    server.routes["/manifest.json"] = huge_manifest
    with pytest.raises(HubError, match=re.escape("manifest.json is larger than 1024 KiB")):
        await fetch_manifest(server.root, allow_private=True)
    skill = HubSkill("demo", "1.2.0", "", {"SKILL.md": sha(SKILL_MD), "test.json": sha(TRAP)})
    (server.folder / "skills" / "demo" / "test.json").unlink()
    with pytest.raises(HubError, match=r"hub answered HTTP 404 for .*/skills/demo/test\.json"):
        await fetch_skill(server.root, skill, allow_private=True)


async def test_a_slow_drip_answer_hits_the_overall_deadline(
    server: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def drip(request: web.Request) -> web.StreamResponse:
        # A byte every 0.1 s never trips a per-read timeout: only a total deadline ends it.
        response = web.StreamResponse()
        await response.prepare(request)
        with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
            for _ in range(100):
                await response.write(b" ")
                await asyncio.sleep(0.1)
        return response

    server.routes["/manifest.json"] = drip
    monkeypatch.setattr(hub, "TIMEOUT_SECONDS", 0.5)
    started = asyncio.get_running_loop().time()
    with pytest.raises(HubError, match=r"no complete answer from .*/manifest\.json within 0\.5 s"):
        await fetch_manifest(server.root, allow_private=True)
    assert asyncio.get_running_loop().time() - started < 3


# -- versions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("candidate", "installed", "expected"),
    [
        ("1.2.1", "1.2.0", True),
        ("1.10.0", "1.9.9", True),
        ("2", "1.99.99", True),
        ("1.2", "1.2.0", False),
        ("1.2.0", "1.2", False),
        ("1.0.0", "1.0.1", False),
        ("0.9", "1.0", False),
    ],
)
def test_newer_compares_numerically_with_missing_parts_as_zero(
    candidate: str, installed: str, expected: bool
) -> None:
    assert newer(candidate, installed) is expected


@pytest.mark.parametrize("bad", ["1.2.0-beta", "v1.2", "", "1..2", "1.2.3.4", "one"])
def test_newer_refuses_versions_that_are_not_numbers(bad: str) -> None:
    with pytest.raises(HubError, match=re.escape("is not a version like 1.2.0")):
        newer(bad, "1.0.0")
    with pytest.raises(HubError):
        newer("1.0.0", bad)


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made now with the openssl command."""
    cert_file, key_file = folder / "hub.crt", folder / "hub.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt"),
            *("ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=augure-hub"),
            *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key_file)),
            *("-out", str(cert_file)),
        ],
        check=True,
        capture_output=True,
    )
    return cert_file, key_file


async def test_an_https_hub_may_not_redirect_to_plain_http(
    server: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert_file, key_file = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))  # httpx trusts it through the env
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    async with HubServer(server.folder, context) as secure:
        assert secure.root.startswith("https://127.0.0.1:")
        [skill] = await fetch_manifest(secure.root, allow_private=True)  # TLS itself works
        assert skill.id == "demo"
        secure.routes["/manifest.json"] = redirect(f"{server.root}/manifest.json")
        with pytest.raises(HubError, match="not https"):
            await fetch_manifest(secure.root, allow_private=True)
    assert server.paths == []
