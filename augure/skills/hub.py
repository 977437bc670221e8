"""Skill hubs: read a hub's manifest and download one skill's files, verified by sha256.

A hub is a base URL (`http(s)://` or `file://`) serving `manifest.json` and
`skills/<id>/<file>`. The manifest is the only thing trusted: ids are validated before any
path or URL is built from them, only the files it lists are ever fetched, and each one must
match its hash. Over http(s) every redirect hop passes the SSRF guard and bodies are read as a
stream with a hard cap; over `file://` nothing that resolves outside the hub folder is read.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit
from urllib.request import url2pathname

import httpx

from augure.common.errors import NotDone
from augure.common.hubspec import clipped
from augure.skills.model import FILES, MAX_ID_LENGTH, valid_id
from augure.tools.netguard import BlockedURL, check_url

# A hostile manifest chooses what its errors quote: a short, one-line piece of it.
QUOTED = 40

MAX_FILE_BYTES = 256 * 1024
MAX_MANIFEST_BYTES = 1024 * 1024
TIMEOUT_SECONDS = 20.0
MAX_REDIRECTS = 5
VERSION = re.compile(r"^\d{1,9}(\.\d{1,9}){0,2}$")
SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


class HubError(NotDone):
    """A hub or skill that cannot be used; the message is one line, fit for the owner."""


@dataclass(frozen=True)
class HubSkill:
    id: str
    version: str
    description: str
    files: dict[str, str]  # file name -> sha256 hex (lowercase)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def newer(candidate: str, installed: str) -> bool:
    """True if `candidate` is a higher version than `installed` ("1.2" == "1.2.0")."""
    a, b = _version(candidate), _version(installed)
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)) > b + (0,) * (width - len(b))


def _version(text: str) -> tuple[int, ...]:
    if not isinstance(text, str) or not VERSION.match(text):
        raise HubError(f"version {clipped(text, QUOTED)} is not a version like 1.2.0")
    return tuple(int(part) for part in text.split("."))


# -- the manifest -------------------------------------------------------------------------


def parse_manifest(data: bytes) -> list[HubSkill]:
    """The manifest's skills, or HubError naming the first thing wrong with it."""
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise HubError("hub manifest.json is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise HubError(f"hub manifest.json is not valid JSON (line {exc.lineno})") from None
    if not isinstance(document, dict) or not isinstance(document.get("skills"), list):
        raise HubError('hub manifest.json must be an object with a "skills" list')
    entries: list[Any] = document["skills"]
    if not all(isinstance(entry, dict) for entry in entries):
        raise HubError("hub manifest.json: every entry of skills must be an object")
    # All bad ids named at once, so the hub's owner can fix them in one go.
    bad = [clipped(entry.get("id"), QUOTED) for entry in entries if not valid_id(entry.get("id"))]
    if bad:
        raise HubError(
            f"hub manifest.json has invalid skill id(s) {', '.join(bad[:5])}: ids are "
            f"lowercase letters and digits joined by single hyphens, at most {MAX_ID_LENGTH} "
            "characters"
        )
    skills: list[HubSkill] = []
    seen: set[str] = set()
    for entry in entries:
        skill = _entry(entry)
        if skill.id in seen:
            raise HubError(f"hub manifest.json lists skill {skill.id} twice")
        seen.add(skill.id)
        skills.append(skill)
    return skills


def _entry(entry: dict[str, Any]) -> HubSkill:
    skill_id: str = entry["id"]
    version, description, files = entry.get("version"), entry.get("description"), entry.get("files")
    if not isinstance(version, str) or not VERSION.match(version):
        raise HubError(f"skill {skill_id}: version {clipped(version, QUOTED)} is not like 1.2.0")
    if not isinstance(description, str):
        raise HubError(f"skill {skill_id}: description must be a string")
    if not isinstance(files, dict):
        raise HubError(f"skill {skill_id}: files must be an object of file name to sha256")
    return HubSkill(skill_id, version, description, _checked_files(skill_id, files))


def _checked_files(skill_id: str, files: dict[Any, Any]) -> dict[str, str]:
    if "SKILL.md" not in files:
        raise HubError(f"skill {skill_id}: the manifest does not list SKILL.md")
    checked: dict[str, str] = {}
    for name, digest in files.items():
        if name not in FILES:
            shown = clipped(name, QUOTED)
            raise HubError(f"skill {skill_id}: file {shown} is not one of {', '.join(FILES)}")
        if not isinstance(digest, str) or not SHA256.match(digest):
            raise HubError(f"skill {skill_id}: the sha256 of {name} is not 64 hex characters")
        checked[name] = digest.lower()
    return checked


async def fetch_manifest(hub_url: str, *, allow_private: bool = False) -> list[HubSkill]:
    data = await _fetch(hub_url, ("manifest.json",), MAX_MANIFEST_BYTES, allow_private)
    return parse_manifest(data)


async def fetch_skill(
    hub_url: str, skill: HubSkill, *, allow_private: bool = False
) -> dict[str, bytes]:
    """The skill's listed files by name, each verified against its sha256 in the manifest."""
    # The caller may have built `skill` itself: check it as strictly as a manifest entry,
    # and before its id goes anywhere near a path.
    if not valid_id(skill.id):
        raise HubError(f"invalid skill id {clipped(skill.id, QUOTED)}")
    files = _checked_files(skill.id, dict(skill.files))
    fetched: dict[str, bytes] = {}
    for name, digest in files.items():
        data = await _fetch(hub_url, ("skills", skill.id, name), MAX_FILE_BYTES, allow_private)
        if hashlib.sha256(data).hexdigest() != digest:
            raise HubError(f"skill {skill.id}: {name} does not match its sha256 in the manifest")
        fetched[name] = data
    return fetched


# -- fetching -----------------------------------------------------------------------------


async def _fetch(hub_url: str, parts: tuple[str, ...], limit: int, allow_private: bool) -> bytes:
    where = urlsplit(hub_url)
    # These messages never echo the URL: it may hold a password, and they reach the chat.
    if where.scheme not in ("http", "https", "file"):
        raise HubError(f"a hub URL starts with http://, https:// or file://, not {where.scheme!r}")
    if where.username or where.password:
        raise HubError("a hub URL must not contain credentials")
    if where.query or where.fragment:
        raise HubError("a hub URL must not have a query or fragment")
    if where.scheme == "file":
        return await asyncio.to_thread(_read_local, _hub_folder(hub_url), parts, limit)
    url = hub_url.rstrip("/") + "/" + "/".join(parts)
    try:
        async with (
            httpx.AsyncClient(timeout=TIMEOUT_SECONDS, follow_redirects=False) as client,
            asyncio.timeout(TIMEOUT_SECONDS),
        ):
            return await _get(client, url, limit, allow_private)
    except TimeoutError:
        raise HubError(f"no complete answer from {url} within {TIMEOUT_SECONDS:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise HubError(_one_line(f"cannot fetch {url}: {exc}")) from None


async def _get(client: httpx.AsyncClient, url: str, limit: int, allow_private: bool) -> bytes:
    first = url
    for _ in range(MAX_REDIRECTS + 1):
        try:
            await check_url(url, allow_private=allow_private)
        except BlockedURL as exc:
            raise HubError(_one_line(f"refused {url}: {exc}")) from None
        # Every file comes from the hub the manifest came from (its scheme, host and port):
        # a redirect elsewhere, to a mirror nobody configured, is refused.
        if _origin(url) != _origin(first):
            raise HubError(f"refused {url}: not on the hub's own host ({_origin(first)})")
        async with client.stream("GET", url) as response:
            location = response.headers.get("location")
            if response.is_redirect and location:
                following = urljoin(url, location)
                # An https hub must not be moved to plain http, where the answer can be changed.
                if url.startswith("https:") and not following.startswith("https:"):
                    raise HubError(f"refused redirect from {url} to {following}: not https")
                url = following
                continue
            if response.status_code != 200:
                raise HubError(f"hub answered HTTP {response.status_code} for {url}")
            return await _read_capped(response, url, limit)
    raise HubError(f"more than {MAX_REDIRECTS} redirects from {first}")


def _origin(url: str) -> str:
    where = urlsplit(url)
    port = where.port or {"http": 80, "https": 443}.get(where.scheme)
    return f"{where.scheme}://{(where.hostname or '').rstrip('.')}:{port}"


async def _read_capped(response: httpx.Response, url: str, limit: int) -> bytes:
    too_big = HubError(f"{url} is larger than {limit // 1024} KiB; refused")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_big
    chunks: list[bytes] = []
    size = 0
    # Decoded bytes are counted, so a small gzip body that inflates past the cap stops too.
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


def _hub_folder(hub_url: str) -> Path:
    where = urlsplit(hub_url)
    if where.netloc not in ("", "localhost"):
        raise HubError(f"file hub {hub_url!r} must be on this machine (file:///path)")
    folder = Path(url2pathname(where.path))
    if not folder.is_absolute():
        raise HubError(f"file hub {hub_url!r} must name an absolute folder")
    folder = folder.resolve()
    if not folder.is_dir():
        raise HubError(f"hub folder {folder} does not exist")
    return folder


def _read_local(folder: Path, parts: tuple[str, ...], limit: int) -> bytes:
    shown = "/".join(parts)
    target = folder.joinpath(*parts).resolve()
    if not target.is_relative_to(folder):
        raise HubError(f"hub file {shown} resolves outside the hub folder; refused")
    # O_NOFOLLOW: the resolved path has no symlink left; one swapped in since is not followed.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(target, flags)
    except FileNotFoundError:
        raise HubError(f"the hub has no {shown}") from None
    except OSError as exc:
        raise HubError(f"cannot read hub file {shown}: {exc.strerror}") from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise HubError(f"hub file {shown} is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise HubError(f"hub file {shown} is larger than {limit // 1024} KiB; refused")
    return data
