"""Installing skills from hubs (docs/reference/skills.md#hubs): manifest hubs and GitHub hubs.

`prepare` fetches, checks, parses and scans; what it returns is what the owner approves (or a
line saying why it is refused, unasked). `install` installs exactly what was approved: by
bundle digest, so two pending requests, or a hub that moved in between, never hand one the
other's files. A GitHub skill is pinned to the commit it was read at; an update is another
commit, shown with what changed, and asked again.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any, Protocol

from augure.common.hubspec import GitHubHub, Hub, HubSpecError, ManifestHub, parse_hub
from augure.config.settings import Config
from augure.skills import hub, scan
from augure.skills.model import (
    FILES,
    SKILL_MD,
    SkillError,
    SkillMeta,
    VettedSkill,
    check_id,
    parse_skill_md,
)
from augure.skills.runner import CheckResult
from augure.skills.store import SkillRecord, SkillStore
from augure.tools.github.tool import github_settings, github_token

PREPARED_KEPT = 32  # hub skills awaiting a press; older ones are fetched again if approved
NO_HUB = "no skill hub is configured: set skills.hub_url or skills.hubs"


class Current(str):
    """Refused because the installed skill is what the hub has (or newer): not a fault."""

    __slots__ = ()


class Skills(Protocol):
    """What installing needs of the skill service (which holds the installer)."""

    config: Config
    files: SkillStore

    def known_tools(self) -> set[str]: ...
    async def check(self, meta: SkillMeta, files: dict[str, bytes]) -> CheckResult: ...
    async def activate(self, meta: SkillMeta) -> None: ...


class Installer:
    def __init__(self, service: Skills) -> None:
        self.service = service
        self.files = service.files
        self._prepared: OrderedDict[str, VettedSkill] = OrderedDict()

    def hubs(self) -> list[Hub]:
        """`hub_url` first, then `hubs` in their order (both checked when the config loaded)."""
        skills = self.service.config.skills
        entries = ([skills.hub_url] if skills.hub_url else []) + list(skills.hubs)
        return list(dict.fromkeys(parse_hub(entry) for entry in entries))

    def _chosen(self, record: SkillRecord | None, hub_name: str | None) -> list[Hub] | str:
        hubs = self.hubs()
        if not hubs:
            return NO_HUB
        if hub_name is not None:
            named = [h for h in hubs if hub_name in (h.name, h.spec)]
            if not named:
                known = ", ".join(h.name for h in hubs)
                return f"no hub named {hub_name[:80]!r}; the hubs are: {known}"
            return named
        if record is not None and record.source == "hub" and record.hub:
            # An update comes from where the skill came from, never from another hub that
            # happens to publish the same id.
            same = [h for h in hubs if h.spec == record.hub]
            if not same:
                return (
                    f"skill {record.id} came from {record.hub}, which is no longer among the "
                    "configured hubs; name one with --hub to take it from there"
                )
            return same
        return hubs

    async def prepare(self, skill_id: str, hub_name: str | None = None) -> VettedSkill | str:
        """Fetch, check, parse and scan a hub skill. A string is why it is refused."""
        try:
            check_id(skill_id)
            record = await self.files.record(skill_id)
            hubs = self._chosen(record, hub_name)
        except (SkillError, HubSpecError) as exc:
            return str(exc)
        if isinstance(hubs, str):
            return hubs
        for where in hubs:
            try:
                found = await self._fetch(where, skill_id, record)
            except hub.HubError as exc:
                return f"refused {skill_id}: {exc}"
            if found is not None:
                return found if isinstance(found, str) else self._keep(found)
        if len(self.hubs()) == 1:
            return f"the hub has no skill {skill_id!r}"
        return f"no configured hub has a skill {skill_id!r}"

    async def _fetch(
        self, where: Hub, skill_id: str, record: SkillRecord | None
    ) -> VettedSkill | str | None:
        if isinstance(where, ManifestHub):
            return await self._from_manifest(where, skill_id, record)
        return await self._from_github(where, skill_id, record)

    async def _from_manifest(
        self, where: ManifestHub, skill_id: str, record: SkillRecord | None
    ) -> VettedSkill | str | None:
        private = bool(self.service.config.tools.section("http").get("allow_private_networks"))
        manifest = await hub.fetch_manifest(where.url, allow_private=private)
        entry = next((s for s in manifest if s.id == skill_id), None)
        if entry is None:
            return None
        if record is not None and not hub.newer(entry.version, record.version):
            return Current(
                f"skill {skill_id} {record.version} is installed; the hub's {entry.version} "
                "is not newer"
            )
        files = await hub.fetch_skill(where.url, entry, allow_private=private)
        extra = sorted(set(files) - set(FILES))
        if extra or SKILL_MD not in files:
            return f"refused {skill_id}: a skill holds SKILL.md, skill.py, test.json; got {extra}"
        return self._checked(skill_id, files, where, None, record)

    async def _from_github(
        self, where: GitHubHub, skill_id: str, record: SkillRecord | None
    ) -> VettedSkill | str | None:
        config = self.service.config
        try:  # PyGithub is the `github` extra: loaded here, never at start (docs/performance.md)
            from augure.skills import github_hub
        except ImportError:
            return "a GitHub hub needs the github extra: run pip install 'augure[github]'"
        installed = record.revision if record is not None else None
        found = await github_hub.fetch(
            where, skill_id, github_settings(config).base_url, github_token(config), installed
        )
        if found is None:
            return None
        if isinstance(found, github_hub.Unchanged):
            return Current(f"skill {skill_id} is installed at commit {found.commit}; nothing newer")
        if record is not None and self._installed(skill_id) == found.files:
            return Current(
                f"skill {skill_id}: its files at commit {found.commit} are the ones installed "
                f"(commit {record.revision or 'unknown'}); nothing to update"
            )
        return self._checked(skill_id, found.files, where, found.commit, record)

    def _checked(
        self,
        skill_id: str,
        files: dict[str, bytes],
        where: Hub,
        revision: str | None,
        record: SkillRecord | None,
    ) -> VettedSkill | str:
        try:
            meta = parse_skill_md(files[SKILL_MD].decode("utf-8"), skill_id)
        except (SkillError, UnicodeDecodeError) as exc:
            return f"refused {skill_id}: {exc}"
        known = frozenset(self.service.known_tools())
        github = isinstance(where, GitHubHub)
        result = scan.scan(files, meta.declared(known), known, companions=github)
        if not result.ok:
            return f"refused {skill_id}: the static scan failed: {result.verdict()}"
        changes = _changes(self._installed(skill_id), files) if record is not None else None
        return VettedSkill(meta, files, result.verdict(), where.spec, revision, known, changes)

    def _installed(self, skill_id: str) -> dict[str, bytes]:
        return {**self.files.files(skill_id), **self.files.companions(skill_id)}

    def _keep(self, prepared: VettedSkill) -> VettedSkill:
        self._prepared[prepared.digest] = prepared
        self._prepared.move_to_end(prepared.digest)
        while len(self._prepared) > PREPARED_KEPT:
            self._prepared.popitem(last=False)
        return prepared

    async def install(
        self, skill_id: str, approved: dict[str, Any] | None = None, hub_name: str | None = None
    ) -> str:
        """Install exactly what the owner approved (`approved`, the summary they were shown),
        or, with approval off, what the hub serves now."""
        if approved is None:
            prepared: VettedSkill | str = await self.prepare(skill_id, hub_name)
        else:
            found = self._prepared.pop(str(approved.get("bundle_sha256")), None)
            if found is None or found.meta.name != skill_id:
                raise SkillError(
                    f"what was approved for {skill_id} is no longer at hand; ask again"
                )
            prepared = found
        if isinstance(prepared, str):
            raise SkillError(prepared)
        return await self._put(prepared)

    async def _put(self, prepared: VettedSkill) -> str:
        meta, files, service = prepared.meta, prepared.files, self.service
        skill_id = meta.name
        github = prepared.revision is not None
        pinned = f" at commit {prepared.revision}" if github else ""
        origin = {"hub": prepared.hub, "revision": prepared.revision}
        previous = await self.files.record(skill_id)
        if previous is None or not self.files.exists(skill_id):
            self.files.write(skill_id, files, companions=github)
            await self.files.put(
                skill_id, state="testing", version=meta.version, source="hub", **origin
            )
            result = await service.check(meta, files)
            if not result.passed:
                await self.files.set_state(skill_id, "broken", result.detail)
                raise SkillError(f"skill {skill_id} installed but broken: {result.detail}")
            await service.activate(meta)
            return f"Installed skill {skill_id} {meta.version}{pinned} (active): {meta.description}"
        result = await service.check(meta, files)
        if not result.passed:
            return (
                f"Kept skill {skill_id} {previous.version}: the new version {meta.version}"
                f"{pinned} failed its test: {result.detail}"
            )
        self.files.write(skill_id, files, staging=True, companions=github)
        self.files.promote(skill_id)
        await self.files.put(skill_id, state="active", version=meta.version, source="hub", **origin)
        await service.activate(meta)
        if github:
            return f"Updated skill {skill_id} to commit {prepared.revision} (active)."
        return f"Updated skill {skill_id} from {previous.version} to {meta.version} (active)."

    async def from_hubs(self) -> list[SkillRecord]:
        """The installed skills that came from a hub: what `augure skills update` checks."""
        return [r for r in await self.files.records() if r.source == "hub"]


def _changes(before: dict[str, bytes], after: dict[str, bytes]) -> dict[str, list[str]]:
    """Which files an update adds, changes and removes (each shown in full beside it)."""

    def digest(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    return {
        "added": sorted(set(after) - set(before)),
        "changed": sorted(
            n for n in set(after) & set(before) if digest(after[n]) != digest(before[n])
        ),
        "removed": sorted(set(before) - set(after)),
    }
