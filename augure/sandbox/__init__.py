"""Where untrusted commands run: bubblewrap (default on Linux) or Docker, chosen by `[sandbox]`.

May import (docs/architecture.md, "Where things are"): approval, store, llm, host, config,
common.

A start asks only `sandbox_problem` (augure/sandbox/readiness.py); the backends and what they
share (augure/sandbox/base.py) load with the first sandboxed command, `augure doctor`, or the
first use of one of their names from this package (docs/performance.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from augure.common.folders import workspace_name
from augure.sandbox.readiness import sandbox_problem

if TYPE_CHECKING:
    from augure.config.settings import Config
    from augure.sandbox.base import OUTPUT_CAP, ExecResult, Sandbox, SandboxError, workspace_for
    from augure.sandbox.bwrap import BwrapSandbox
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

# The module of each name imported on its first use (`__getattr__`).
_LATER = {
    "OUTPUT_CAP": "base",
    "ExecResult": "base",
    "Sandbox": "base",
    "SandboxError": "base",
    "workspace_for": "base",
    "BwrapSandbox": "bwrap",
    "DockerSandbox": "docker",
}


def __getattr__(name: str) -> object:
    # The backends are needed by a command, not by the bot's start (docs/performance.md).
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LATER[name]}"), name)
    globals()[name] = value
    return value


def open_sandbox(config: Config) -> Sandbox:
    """The configured backend; SandboxError (with what to do) when it cannot run."""
    # Loaded with the first command, not the bot's start (docs/performance.md).
    from augure.sandbox.base import SandboxError

    problem = sandbox_problem(config)
    if problem is not None:
        raise SandboxError(problem)
    if config.sandbox.backend == "docker":
        from augure.sandbox.docker import DockerSandbox

        return DockerSandbox(config.sandbox)
    from augure.sandbox.bwrap import BwrapSandbox

    return BwrapSandbox(config.sandbox)


async def probe(config: Config) -> tuple[bool, str]:
    """Run `true` in a scratch workspace, for `augure doctor`: user namespaces may be off."""
    # Loaded by `augure doctor`, not the bot's start (docs/performance.md).
    from augure.sandbox.base import SandboxError, workspace_for

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
