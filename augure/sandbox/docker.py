"""Docker backend, for hosts with an engine and no unprivileged user namespaces.

The container is named, so a timeout can `docker kill` it: killing the `docker run` client
alone would leave the container running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from augure.config.execution import SandboxConfig
from augure.sandbox.base import (
    DRAIN_SECONDS,
    MAX_FILE_BYTES,
    NPROC,
    SANDBOX_GID,
    SANDBOX_UID,
    TMP_BYTES,
    ExecResult,
    SandboxError,
    kill_group,
    run_process,
    sandbox_env,
)

CPUS = "1"
CLIENT_ENV_KEYS = ("PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT")


class DockerSandbox:
    name = "docker"

    def __init__(self, config: SandboxConfig, docker: str = "docker") -> None:
        self.config = config
        self.docker = docker
        # Root can hand the workspace to nobody; any other user keeps it and runs as itself,
        # still not root inside the container.
        root = os.geteuid() == 0
        self.uid = SANDBOX_UID if root else os.getuid()
        self.gid = SANDBOX_GID if root else os.getgid()

    def argv(
        self,
        command: list[str],
        *,
        workspace: Path,
        name: str,
        env: dict[str, str],
        interactive: bool = False,
        ro_files: Sequence[Path] = (),
        inbox: Path | None = None,
    ) -> list[str]:
        memory = f"{self.config.memory_mb}m"
        args = [self.docker, "run", "--rm", "--name", name]
        if interactive:
            args.append("--interactive")
        args += [
            "--user",
            f"{self.uid}:{self.gid}",
            "--network",
            "bridge" if self.config.network else "none",
            "--memory",
            memory,
            "--memory-swap",
            memory,  # equal to --memory: no swap on top
            "--cpus",
            CPUS,
            "--pids-limit",
            str(NPROC),
            "--ulimit",
            f"fsize={MAX_FILE_BYTES}",
            "--ulimit",
            "core=0",
            "--read-only",
            "--tmpfs",
            f"/tmp:rw,nosuid,nodev,size={TMP_BYTES}",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--init",
            "--volume",
            f"{workspace}:/workspace:rw",
            "--workdir",
            "/workspace",
        ]
        if inbox is not None:
            args += ["--volume", f"{inbox}:/workspace/inbox:ro"]
        for file in ro_files:
            args += ["--volume", f"{file}:{file}:ro"]
        for key in sorted(env):
            args += ["--env", f"{key}={env[key]}"]
        return [*args, "--", self.config.image, *command]

    async def run(
        self,
        argv: list[str],
        *,
        workspace: Path,
        timeout: float,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        ro_files: Sequence[Path] = (),
        inbox: Path | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> ExecResult:
        if not argv:
            raise SandboxError("empty command")
        if shutil.which(self.docker) is None:
            raise SandboxError(f"{self.docker} not found")
        name = f"augure-{uuid.uuid4().hex[:16]}"
        command = self.argv(
            argv,
            workspace=workspace.resolve(),
            name=name,
            env=sandbox_env(env),
            interactive=stdin is not None,
            ro_files=ro_files,
            inbox=inbox.resolve() if inbox is not None else None,
        )

        async def kill(process: asyncio.subprocess.Process) -> None:
            killer = await asyncio.create_subprocess_exec(
                self.docker,
                "kill",
                name,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(killer.wait(), DRAIN_SECONDS)
            await kill_group(process)

        client_env = {k: v for k, v in os.environ.items() if k in CLIENT_ENV_KEYS}
        try:
            return await run_process(
                command, timeout=timeout, stdin=stdin, env=client_env, kill=kill, on_line=on_line
            )
        except OSError as exc:
            raise SandboxError(f"could not start docker: {exc}") from exc
