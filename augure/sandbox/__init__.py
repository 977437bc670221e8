"""Where untrusted commands run: bubblewrap (default on Linux) or Docker, chosen by `[sandbox]`.

May import (docs/architecture.md, "Where things are"): approval, store, llm, host, config,
common.
"""

from __future__ import annotations

import shutil

from augure.common.folders import workspace_name
from augure.config.settings import Config
from augure.sandbox.base import (
    OUTPUT_CAP,
    ExecResult,
    Sandbox,
    SandboxError,
    workspace_for,
)
from augure.sandbox.bwrap import BwrapSandbox, missing_tools
from augure.sandbox.docker import DockerSandbox

__all__ = [
    "OUTPUT_CAP",
    "BwrapSandbox",
    "DockerSandbox",
    "ExecResult",
    "Sandbox",
    "SandboxError",
    "open_sandbox",
    "probe",
    "sandbox_problem",
    "workspace_for",
    "workspace_name",
]


def sandbox_problem(config: Config) -> str | None:
    """None when the configured backend can run; otherwise what the owner must do."""
    backend = config.sandbox.backend
    if backend == "none":
        return "set [sandbox] backend to bwrap or docker"
    if backend == "docker":
        return None if shutil.which("docker") else "install Docker (no `docker` on PATH)"
    missing = missing_tools()
    if "bwrap" in missing:
        return "install bubblewrap"
    if missing:
        return f"install util-linux ({', '.join(missing)} missing)"
    return None


def open_sandbox(config: Config) -> Sandbox:
    """The configured backend; SandboxError (with what to do) when it cannot run."""
    problem = sandbox_problem(config)
    if problem is not None:
        raise SandboxError(problem)
    if config.sandbox.backend == "docker":
        return DockerSandbox(config.sandbox)
    return BwrapSandbox(config.sandbox)


async def probe(config: Config) -> tuple[bool, str]:
    """Run `true` in a scratch workspace, for `augure doctor`: user namespaces may be off."""
    try:
        sandbox = open_sandbox(config)
        workspace = workspace_for(config.home, "doctor.probe", sandbox)
        result = await sandbox.run(["/bin/true"], workspace=workspace, timeout=30)
    except SandboxError as exc:
        return False, str(exc)
    if result.exit_code != 0:
        detail = result.stderr.strip().splitlines()[-1:] or [f"exit {result.exit_code}"]
        return False, f"{sandbox.name} failed: {detail[0]}"
    return True, f"{sandbox.name} runs commands"
