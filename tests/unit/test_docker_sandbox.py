"""The Docker backend: the exact `docker run` it builds, and how it runs and kills it.

No engine here: a fake `docker` on PATH records what it was asked to do.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from augure.config.execution import SandboxConfig
from augure.config.settings import load_config
from augure.sandbox import DockerSandbox, open_sandbox, sandbox_problem

ENV = {"HOME": "/workspace", "PATH": "/usr/bin:/bin"}


def as_root(monkeypatch: pytest.MonkeyPatch, root: bool) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0 if root else 1000)
    monkeypatch.setattr(os, "getuid", lambda: 0 if root else 1000)
    monkeypatch.setattr(os, "getgid", lambda: 0 if root else 1000)


def test_run_argv_is_locked_down(monkeypatch: pytest.MonkeyPatch) -> None:
    as_root(monkeypatch, True)
    sandbox = DockerSandbox(SandboxConfig(memory_mb=256, image="python:3.11-slim"))
    argv = sandbox.argv(
        ["/bin/sh", "-c", "echo hi"], workspace=Path("/srv/ws/42"), name="augure-x", env=ENV
    )
    assert argv == [
        "docker", "run", "--rm", "--name", "augure-x",
        "--user", "65534:65534",
        "--network", "none",
        "--memory", "256m", "--memory-swap", "256m",
        "--cpus", "1",
        "--pids-limit", "64",
        "--ulimit", "fsize=268435456", "--ulimit", "core=0",
        "--read-only",
        "--tmpfs", "/tmp:rw,nosuid,nodev,size=67108864",
        "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges",
        "--init",
        "--volume", "/srv/ws/42:/workspace:rw",
        "--workdir", "/workspace",
        "--env", "HOME=/workspace", "--env", "PATH=/usr/bin:/bin",
        "--", "python:3.11-slim", "/bin/sh", "-c", "echo hi",
    ]  # fmt: skip


def test_network_stdin_files_and_a_non_root_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    as_root(monkeypatch, False)
    sandbox = DockerSandbox(SandboxConfig(network=True, image="-evil"))
    argv = sandbox.argv(
        ["agent", "task"],
        workspace=Path("/w"),
        name="n",
        env={},
        interactive=True,
        ro_files=[Path("/opt/agent/bin/agent")],
        inbox=Path("/home/me/.augure/inbox"),
    )
    assert argv[argv.index("--network") + 1] == "bridge"
    # The owner's documents, beside the workspace and read-only.
    assert "/home/me/.augure/inbox:/workspace/inbox:ro" in argv
    assert argv[argv.index("--user") + 1] == "1000:1000"  # never root in the container
    assert "--interactive" in argv
    assert "/opt/agent/bin/agent:/opt/agent/bin/agent:ro" in argv
    # An image name can never be read as an option.
    assert argv[-4:] == ["--", "-evil", "agent", "task"]


FAKE_DOCKER = """#!/bin/sh
printf '%s\\n' "$(/usr/bin/python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@")" \
  >> "{log}"
if [ "$1" = run ]; then
  for arg in "$@"; do
    case "$arg" in sleep) exec /usr/bin/sleep 30 ;; esac
  done
  cat
  echo "ran"
  echo "warn" >&2
  exit 3
fi
"""


@pytest.fixture
def fake_docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "docker.log"
    script = tmp_path / "bin" / "docker"
    script.parent.mkdir()
    script.write_text(FAKE_DOCKER.format(log=log))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
    return log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


async def test_run_passes_stdin_and_reports(fake_docker: Path, tmp_path: Path) -> None:
    sandbox = DockerSandbox(SandboxConfig())
    result = await sandbox.run(
        ["cat"], workspace=tmp_path, timeout=10, stdin=b"from stdin\n", env={"A": "1"}
    )
    assert (result.exit_code, result.stdout, result.stderr) == (3, "from stdin\nran\n", "warn\n")
    assert not result.timed_out and not result.truncated
    (run,) = calls(fake_docker)
    name = run[run.index("--name") + 1]
    assert name.startswith("augure-")
    assert (
        run
        == sandbox.argv(
            ["cat"],
            workspace=tmp_path.resolve(),
            name=name,
            env={**run_env(run)},
            interactive=True,
        )[1:]
    )
    assert "A=1" in run


def run_env(run: list[str]) -> dict[str, str]:
    pairs = [run[i + 1] for i, arg in enumerate(run) if arg == "--env"]
    return dict(pair.split("=", 1) for pair in pairs)


async def test_timeout_kills_the_container_by_name(fake_docker: Path, tmp_path: Path) -> None:
    sandbox = DockerSandbox(SandboxConfig())
    started = time.monotonic()
    result = await sandbox.run(["sleep"], workspace=tmp_path, timeout=1)
    assert result.timed_out and result.exit_code < 0
    assert time.monotonic() - started < 5
    run, kill = calls(fake_docker)
    assert kill == ["kill", run[run.index("--name") + 1]]


def test_factory_and_missing_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_docker: Path
) -> None:
    config = load_config(home=tmp_path)
    config.sandbox = SandboxConfig(backend="docker")
    assert sandbox_problem(config) is None
    assert isinstance(open_sandbox(config), DockerSandbox)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert sandbox_problem(config) == "install Docker (no `docker` on PATH)"
