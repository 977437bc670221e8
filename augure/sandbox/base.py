"""What every sandbox backend offers: run an argv in a workspace, bounded in time and size."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from augure.common.errors import Unavailable
from augure.common.folders import workspace_name

# Per stream. The executor cuts what the model sees at 12,000 characters anyway; keeping more
# than this in memory would only let a `yes` loop grow the bot's own RSS.
OUTPUT_CAP = 64 * 1024
# Processes the sandboxed user may run at once: enough for a build, too few to bomb the host.
NPROC = 64
# The largest file a sandboxed process may write (a disk-filling loop stops here).
MAX_FILE_BYTES = 256 * 1024 * 1024
TMP_BYTES = 64 * 1024 * 1024
# The sandboxed user. `nobody` owns nothing on the host, and RLIMIT_NPROC binds it (not root).
SANDBOX_UID = 65534
SANDBOX_GID = 65534
# After a kill, how long to wait for the pipes to close before giving up on the rest.
DRAIN_SECONDS = 5.0

BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/workspace",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "USER": "nobody",
}


class SandboxError(Unavailable):
    """The sandbox could not be started (not a failure of the command inside it)."""


@dataclass(frozen=True)
class ExecResult:
    exit_code: int  # negative: killed by that signal (as asyncio reports it)
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool  # stdout or stderr went past OUTPUT_CAP and was cut


class Sandbox(Protocol):
    name: str
    # Who runs inside: the owner the workspace folder must have to be writable there.
    uid: int
    gid: int

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
        """`ro_files`: host files (a tool's binary) to show read-only at the same path;
        `inbox`: the owner's documents folder, shown read-only as /workspace/inbox;
        `on_line`: hears the latest non-empty output line (of either stream) as it arrives."""
        ...


def workspace_for(home: Path, chat_id: str | None, sandbox: Sandbox | None = None) -> Path:
    """The chat's workspace under `home/workspaces/`, writable by the sandbox's user."""
    root = home / "workspaces"
    root.mkdir(parents=True, exist_ok=True)
    path = root / workspace_name(chat_id)
    path.mkdir(mode=0o700, exist_ok=True)
    if path.is_symlink() or not path.is_dir():
        raise SandboxError(f"workspace {path} is not a plain folder")
    if sandbox is not None and os.geteuid() == 0:
        # Only the folder itself: a recursive chown would follow links the sandbox planted.
        os.chown(path, sandbox.uid, sandbox.gid, follow_symlinks=False)
    return path


def sandbox_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = dict(BASE_ENV)
    for key, value in (extra or {}).items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise SandboxError(f"invalid environment variable name or value: {key!r}")
        env[key] = value
    return env


class _LastLine:
    """Hands on the last complete non-empty line of each chunk read (a progress bar's `\r`
    ends a line too); a line is looked at through its first LINE_BYTES only."""

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self.on_line = on_line
        self.pending = b""

    def feed(self, chunk: bytes) -> None:
        parts = _LINE_ENDS.split(self.pending + chunk)
        self.pending = parts.pop()[:LINE_BYTES]
        for part in reversed(parts):
            if part.strip():
                self.on_line(part[:LINE_BYTES].decode("utf-8", "replace").strip())
                return

    def end(self) -> None:
        if self.pending.strip():
            self.on_line(self.pending.decode("utf-8", "replace").strip())
        self.pending = b""


_LINE_ENDS = re.compile(rb"\r\n|\r|\n")
LINE_BYTES = 1024


class _Capped:
    def __init__(self, lines: _LastLine | None = None) -> None:
        self.data = bytearray()
        self.cut = False
        self.lines = lines

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        # Keep reading past the cap so a chatty process never blocks on a full pipe.
        while chunk := await stream.read(65536):
            room = OUTPUT_CAP - len(self.data)
            if len(chunk) > room:
                self.cut = True
            if room > 0:
                self.data += chunk[:room]
            if self.lines is not None:
                self.lines.feed(chunk)
        if self.lines is not None:
            self.lines.end()

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


async def run_process(
    argv: list[str],
    *,
    timeout: float,
    stdin: bytes | None,
    env: dict[str, str],
    pass_fds: tuple[int, ...] = (),
    kill: Callable[[asyncio.subprocess.Process], Awaitable[None]] | None = None,
    on_line: Callable[[str], None] | None = None,
    started: Callable[[asyncio.subprocess.Process], Awaitable[None]] | None = None,
) -> ExecResult:
    """Run argv with capped output and a wall-clock limit; `kill` ends it on timeout;
    `on_line` hears each stream's latest line as it arrives (the cap does not apply to it);
    `started` finishes setting up the running process (the sandbox's network); if it
    fails, the process is killed and its error raised.

    The process gets its own session, so the default kill reaches its whole process group.
    Cancellation (the executor's own timeout) kills it the same way: nothing outlives a call.
    """
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        pass_fds=pass_fds,
        start_new_session=True,
    )
    out = _Capped(_LastLine(on_line) if on_line else None)
    err = _Capped(_LastLine(on_line) if on_line else None)
    readers = asyncio.gather(out.drain(process.stdout), err.drain(process.stderr))
    timed_out = False
    try:
        if started is not None:
            await started(process)
        if stdin is not None and process.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(stdin)
                await process.stdin.drain()
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await (kill or kill_group)(process)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(readers), DRAIN_SECONDS)
    finally:
        if process.returncode is None:
            await (kill or kill_group)(process)
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await readers
    code = process.returncode if process.returncode is not None else -9
    return ExecResult(code, out.text(), err.text(), timed_out, out.cut or err.cut)


async def kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, 9)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), DRAIN_SECONDS)
