"""Skills from a GitHub hub (docs/reference/skills.md#hubs), read with the real PyGithub client
from the fake GitHub API, laid out like the public Agent Skills collections."""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from augure.common.hubspec import GitHubHub, HubSpecError, ManifestHub, parse_hub
from augure.config.settings import ConfigError, load_config
from augure.core.app import Core
from augure.skills.install import Current
from augure.skills.model import VettedSkill, companions_text
from tests.cores import Cores
from tests.fakes.github import FakeGitHub
from tests.fakes.skills_repo import (
    BRAND_MD,
    EXTRACT_PY,
    FORMS_MD,
    LAYOUT,
    REPO,
    published,
)

MakeCore = Callable[..., Awaitable[Core]]


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with published() as server:
        yield server


@pytest.fixture
async def make_core(
    tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[MakeCore]:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    opened = Cores()

    async def make(
        hub: str = f"github:{REPO}/skills", token: str | None = None, base_url: str = ""
    ) -> Core:
        home = tmp_path / f"home{len(opened)}"
        home.mkdir()
        secret = f'token = "{token}"\n' if token else ""
        github = f'[tools.github]\nbase_url = "{base_url or fake.base_url}"\n{secret}'
        (home / "augure.toml").write_text(f'[skills]\nhubs = ["{hub}"]\n{github}')
        return await opened.open(load_config(home=home))

    yield make
    await opened.close()


async def prepared(core: Core, skill_id: str, hub: str | None = None) -> VettedSkill:
    found = await core.skills.hubs.prepare(skill_id, hub)
    assert isinstance(found, VettedSkill), found
    return found


async def test_a_skill_is_installed_by_id_with_its_commit_pinned(
    make_core: MakeCore, fake: FakeGitHub
) -> None:
    core = await make_core()
    head = fake.git[REPO].refs["heads/main"]
    offer = await prepared(core, "pdf-tools")
    shown = offer.summary()
    assert shown["commit"] == head and shown["hub"] == f"github:{REPO}/skills"
    assert sorted(shown["files"]) == ["SKILL.md", "references/forms.md", "scripts/extract.py"]
    assert shown["files"]["scripts/extract.py"]["content"] == EXTRACT_PY  # what will run
    assert shown["allowed_tools"] == {"mapped": ["sandbox_exec"], "not_mapped": ["Bash", "Read"]}
    assert shown["tools"] == ["sandbox_exec"] and shown["license"] == "Apache-2.0"
    assert shown["scan"] == "clean"
    assert not (core.skills.files.folder("pdf-tools")).exists()  # nothing before the install

    done = await core.skills.hubs.install("pdf-tools", shown)
    assert done == (
        f"Installed skill pdf-tools 0.1.0 at commit {head} (active): Fill and read PDF forms."
    )
    record = await core.skills.files.record("pdf-tools")
    assert record is not None
    assert (record.state, record.source, record.hub, record.revision) == (
        "active", "hub", f"github:{REPO}/skills", head,
    )  # fmt: skip
    folder = core.skills.files.folder("pdf-tools")
    assert (folder / "scripts" / "extract.py").read_text() == EXTRACT_PY
    assert (folder / "references" / "forms.md").read_text() == FORMS_MD
    # Executable on GitHub, never here: it runs only through sandbox_exec.
    mode = (folder / "scripts" / "extract.py").stat().st_mode
    assert not mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    assert f"commit: {head}" in await core.skills.files.describe("pdf-tools", 3)
    # The skill's turn can read its other files; the catalog offers it.
    shown_to_turn = companions_text(core.skills.files.companions("pdf-tools"))
    assert FORMS_MD in shown_to_turn and "sandbox_exec" in shown_to_turn
    assert "pdf-tools: Fill and read PDF forms." in core.skills.catalog.text
    # Every read went to the commit resolved first, and without a token (a public repository).
    paths = [r.path for r in fake.sent("GET")]
    assert f"/repos/{REPO}/commits/main" in paths
    assert all(r.authorization is None for r in fake.requests)


async def test_a_skill_with_only_name_and_description_is_a_manual_skill(
    make_core: MakeCore,
) -> None:
    core = await make_core()
    message = await core.skills.hubs.install("brand-voice")
    assert message.startswith("Installed skill brand-voice 0.1.0 at commit ")
    meta = core.skills.files.meta("brand-voice")
    assert (meta.trigger, meta.tools, meta.body) == ("manual", (), "Be brief.")
    assert core.skills.files.code("brand-voice") is None


async def test_a_code_skill_with_augures_keys_is_tested_and_active(make_core: MakeCore) -> None:
    core = await make_core()
    await core.skills.hubs.install("tea-timer")
    record = await core.skills.files.record("tea-timer")
    assert record is not None and (record.state, record.version) == ("active", "1.0.0")


async def test_a_skill_failing_the_scan_is_refused_with_the_reason(make_core: MakeCore) -> None:
    core = await make_core()
    refused = await core.skills.hubs.prepare("sneaky")
    assert isinstance(refused, str)
    assert refused.startswith("refused sneaky: the static scan failed: refused: 1 finding(s): ")
    assert "download-and-run@'scripts/setup.sh':2 pipes a download into a shell" in refused
    assert not core.skills.files.folder("sneaky").exists()
    assert await core.skills.hubs.prepare("nowhere") == "the hub has no skill 'nowhere'"


async def test_a_newer_commit_is_offered_with_what_changed(
    make_core: MakeCore, fake: FakeGitHub
) -> None:
    core = await make_core()
    first = fake.git[REPO].refs["heads/main"]
    await core.skills.hubs.install("pdf-tools")
    assert isinstance(await core.skills.hubs.prepare("pdf-tools"), Current)
    # The branch moves, but not this skill's files: nothing to offer.
    fake.commit(REPO, {**LAYOUT, "README.md": "# Agent skills, moved\n"})
    same = await core.skills.hubs.prepare("pdf-tools")
    assert isinstance(same, Current) and "are the ones installed" in same
    changed = {**LAYOUT, "skills/pdf-tools/references/forms.md": FORMS_MD + "Dates: ISO.\n"}
    changed["skills/pdf-tools/references/dates.md"] = "# Dates\n"
    del changed["skills/pdf-tools/scripts/extract.py"]
    second = fake.commit(REPO, changed)
    offer = await prepared(core, "pdf-tools")
    shown = offer.summary()
    assert shown["commit"] == second != first
    assert shown["changes"] == {
        "added": ["references/dates.md"],
        "changed": ["references/forms.md"],
        "removed": ["scripts/extract.py"],
    }
    assert await core.skills.hubs.install("pdf-tools", shown) == (
        f"Updated skill pdf-tools to commit {second} (active)."
    )
    record = await core.skills.files.record("pdf-tools")
    assert record is not None and record.revision == second
    folder = core.skills.files.folder("pdf-tools")
    assert not (folder / "scripts").exists() and (folder / "references" / "dates.md").is_file()


async def test_a_private_repository_needs_the_token(make_core: MakeCore, fake: FakeGitHub) -> None:
    fake.repos[REPO].private = True
    anonymous = await make_core()
    refused = await anonymous.skills.hubs.prepare("brand-voice")
    assert refused == (
        f"refused brand-voice: hub {REPO}/skills: not found on GitHub (a private repository "
        "needs [tools.github] token)"
    )
    core = await make_core(token=fake.token)
    offer = await prepared(core, "brand-voice")
    assert offer.revision == fake.git[REPO].refs["heads/main"]
    assert fake.requests[-1].authorization == f"token {fake.token}"
    wrong = await make_core(token="not-the-token")
    refused = await wrong.skills.hubs.prepare("brand-voice")
    assert isinstance(refused, str) and "GitHub refused the token (401 Bad credentials)" in refused
    assert "not-the-token" not in refused


@pytest.mark.parametrize("pin", ["tag", "sha", "short-sha"])
async def test_ref_as_a_tag_or_a_commit_reads_that_commit(
    make_core: MakeCore, fake: FakeGitHub, pin: str
) -> None:
    first = fake.git[REPO].refs["heads/main"]
    fake.tag(REPO, "v1.0", first)
    fake.commit(REPO, {**LAYOUT, "skills/brand-voice/SKILL.md": BRAND_MD + "Newer.\n"})
    ref = {"tag": "v1.0", "sha": first, "short-sha": first[:7]}[pin]
    core = await make_core(f"github:{REPO}/skills@{ref}")
    offer = await prepared(core, "brand-voice")
    assert offer.revision == first
    assert offer.files["SKILL.md"] == BRAND_MD.encode()


async def test_an_unknown_ref_is_one_line(make_core: MakeCore) -> None:
    core = await make_core(f"github:{REPO}/skills@no-such-branch")
    refused = await core.skills.hubs.prepare("brand-voice")
    assert refused == (
        f"refused brand-voice: hub {REPO}/skills: no branch, tag or commit 'no-such-branch' "
        "(No commit found for SHA: no-such-branch)"
    )


async def test_hub_chosen_by_name(make_core: MakeCore) -> None:
    core = await make_core()
    assert isinstance(await core.skills.hubs.prepare("brand-voice", f"{REPO}/skills"), VettedSkill)
    refused = await core.skills.hubs.prepare("brand-voice", "someone/else")
    assert refused == f"no hub named 'someone/else'; the hubs are: {REPO}/skills"


def test_hub_entries_parse() -> None:
    assert parse_hub("github:octo/agent-skills") == GitHubHub("octo", "agent-skills", "", None)
    assert parse_hub("github:octo/a.b/skills/public@v1.2") == GitHubHub(
        "octo", "a.b", "skills/public", "v1.2"
    )
    assert parse_hub("https://skills.example.com") == ManifestHub("https://skills.example.com")
    # A password never reaches the line that lists the hubs.
    assert ManifestHub("https://me:hunter2@skills.example.com/x?k=v").name == (
        "https://skills.example.com/x"
    )


BAD = {
    "github:octo": "hub 'github:octo': expected github:OWNER/REPO[/PATH][@REF]",
    "github:-octo/x": "hub 'github:-octo/x': '-octo' is not a GitHub owner name",
    "github:octo/..": "hub 'github:octo/..': '..' is not a repository name",
    "github:octo/x/../y": "hub 'github:octo/x/../y': the path segment '..' is not a folder name",
    "github:octo/x@": "hub 'github:octo/x@': '' is not a branch, tag or commit",
    "github:octo/x@a..b": "hub 'github:octo/x@a..b': 'a..b' is not a branch, tag or commit",
    "gitlab:octo/x": (
        "hub 'gitlab:octo/x' is neither a manifest URL (https://, http://, file://) nor "
        "github:OWNER/REPO[/PATH][@REF]"
    ),
}


@pytest.mark.parametrize("entry", list(BAD))
def test_a_bad_hub_entry_is_one_line(entry: str, tmp_path: Path) -> None:
    with pytest.raises(HubSpecError) as caught:
        parse_hub(entry)
    assert str(caught.value) == BAD[entry]
    (tmp_path / "augure.toml").write_text(f'[skills]\nhubs = ["{entry}"]\n')
    with pytest.raises(ConfigError) as refused:
        load_config(home=tmp_path)
    assert BAD[entry] in str(refused.value) and len(str(refused.value).splitlines()) == 1


async def test_github_unreachable_is_one_line(make_core: MakeCore) -> None:
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens on loopback
    core = await make_core(base_url=closed)
    refused = await core.skills.hubs.prepare("brand-voice")
    assert refused == f"refused brand-voice: cannot reach GitHub at {closed}: ConnectionError"
