"""Bubblewrap backend: a throwaway mount, pid, net, ipc and uts namespace per call.

Layering, outermost first: `prlimit` (CPU seconds, address space, processes, file size) ▶
`setpriv` to nobody when the bot runs as root (RLIMIT_NPROC does not bind root) ▶ `bwrap`
(read-only system, empty /tmp, the chat's workspace, no network, no inherited environment).
Each step execs the next, so the process the bot holds is bwrap itself; killing it takes the
sandbox's pid 1 and with it every process inside (`--die-with-parent` + pid namespace).

The network namespace is always the sandbox's own. With `[sandbox] network = true`,
slirp4netns (augure/sandbox/slirp.py) connects it to the outside through the host's sockets,
with the host's loopback refused: the dashboard and any other local service stay out of reach
(docs/security.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import math
import os
import resource
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from augure.config.execution import SandboxConfig
from augure.sandbox import seccomp, slirp
from augure.sandbox.base import (
    MAX_FILE_BYTES,
    NPROC,
    SANDBOX_GID,
    SANDBOX_UID,
    TMP_BYTES,
    ExecResult,
    SandboxError,
    run_process,
    sandbox_env,
)
from augure.sandbox.readiness import missing_tools

log = logging.getLogger(__name__)

# What programs need from /etc, and nothing else: no shadow, no host config, no keys.
ETC_FILES = (
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "ssl",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "resolv.conf",
    "gai.conf",
    "protocols",
    "services",
)
USR_MERGED = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
# Synthetic account files: tools that look up their own user (git, ssh, pip) find one.
PASSWD = "nobody:x:{uid}:{gid}:nobody:/workspace:/bin/sh\n"
GROUP = "nogroup:x:{gid}:\n"
# Environment of the launcher chain itself. The sandbox's pid 1 is a fork of bwrap, and its
# /proc/1/environ is readable from inside: nothing of the bot's environment may reach it.
LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}


# Root only. bwrap runs as nobody and resolves bind sources by path, which nobody cannot walk
# when AUGURE_HOME is private (root's ~/.augure). So, in a private mount namespace that the host
# never sees, root opens the workspace (and any extra file), covers /tmp with a small tmpfs,
# and binds what it opened there; bwrap then binds those reachable paths. The descriptors
# are closed before the chain goes on: an open directory would be a way out of the sandbox.
# Arguments: the workspace, the inbox (or ""), the extra files, "--", the rest of the chain.
STAGE = """set -e
exec 3<"$1"
inbox=$2
if [ -n "$inbox" ]; then exec 9<"$inbox"; fi
shift 2
n=4
for file in "$@"; do
  [ "$file" = -- ] && break
  eval "exec $n<\\"\\$file\\""
  n=$((n + 1))
done
mount -t tmpfs -o mode=0755,size=65536 augure-stage /tmp
mkdir /tmp/workspace
mount --no-canonicalize --bind /proc/self/fd/3 /tmp/workspace
exec 3<&-
if [ -n "$inbox" ]; then
  mkdir /tmp/inbox
  mount --no-canonicalize --bind /proc/self/fd/9 /tmp/inbox
  exec 9<&-
fi
n=4
while [ "$1" != -- ]; do
  : > "/tmp/file$n"
  mount --no-canonicalize --bind "/proc/self/fd/$n" "/tmp/file$n"
  eval "exec $n<&-"
  n=$((n + 1))
  shift
done
shift
exec "$@"
"""
# The common case, no extra files and no inbox, two processes fewer: the workspace itself
# covers /tmp.
STAGE_WORKSPACE = """set -e
exec 3<"$1"
shift
mount --no-canonicalize --bind /proc/self/fd/3 /tmp
exec 3<&-
exec "$@"
"""
# The staging script can hold descriptors 4 to 9 only (sh redirects single digits), and
# keeps 9 for the inbox.
MAX_FILES = 5
# Where the owner's documents appear, read-only, beside the chat's own files.
INBOX_INSIDE = "/workspace/inbox"


@dataclass(frozen=True)
class Mounts:
    """What bwrap binds, by the paths it can reach."""

    workspace: str
    files: list[tuple[str, str]]  # (source as bwrap sees it, path inside)
    stage: list[str]  # the staging prefix of the chain (root only)
    inbox: str | None = None  # source as bwrap sees it


class BwrapSandbox:
    name = "bwrap"

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.as_root = os.geteuid() == 0
        self.uid = SANDBOX_UID if self.as_root else os.getuid()
        self.gid = SANDBOX_GID if self.as_root else os.getgid()

    def limits(self, timeout: float) -> list[str]:
        memory = self.config.memory_mb * 1024 * 1024
        nproc = NPROC if self.as_root else _tasks_of(self.uid) + NPROC
        hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
        if not self.as_root and hard != resource.RLIM_INFINITY:
            nproc = min(nproc, hard)  # raising the hard limit needs root
        return [
            "prlimit",
            f"--as={memory}",
            f"--nproc={nproc}",
            # CPU seconds per process; the wall clock (below) is the real bound.
            f"--cpu={math.ceil(timeout) + 1}",
            f"--fsize={MAX_FILE_BYTES}",
            "--core=0",
            "--",
        ]

    def drop(self) -> list[str]:
        if not self.as_root:
            return []
        return [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--",
        ]

    def bwrap(
        self,
        mounts: Mounts,
        env: dict[str, str],
        passwd_fd: int,
        group_fd: int,
        seccomp_fd: int | None = None,
        network: slirp.UserNetwork | None = None,
    ) -> list[str]:
        # Never --share-net: the host's network namespace holds its loopback, where the
        # dashboard listens and whose cookies a browser sends to every port.
        args = ["bwrap", "--unshare-all"]
        if network is not None:
            args += network.bwrap_args()
        if supports("--disable-userns"):
            # No nested user namespace: that is where most kernel exploits start.
            args += ["--unshare-user", "--disable-userns"]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--die-with-parent", "--new-session", "--clearenv", "--hostname", "sandbox"]
        args += _system_files(network)
        args += ["--perms", "0644", "--ro-bind-data", str(passwd_fd), "/etc/passwd"]
        args += ["--perms", "0644", "--ro-bind-data", str(group_fd), "/etc/group"]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
        args += ["--bind", mounts.workspace, "/workspace", "--chdir", "/workspace"]
        if mounts.inbox is not None:
            args += ["--ro-bind", mounts.inbox, INBOX_INSIDE]
        for source, inside in mounts.files:
            args += ["--ro-bind", source, inside]
        # The root is a tmpfs bwrap built; sealed, nothing outside /workspace and /tmp is
        # writable, not even the ephemeral /etc.
        args += ["--remount-ro", "/"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        return args

    def mounts(self, workspace: Path, files: Sequence[Path], inbox: Path | None = None) -> Mounts:
        if not self.as_root:
            shown = str(inbox) if inbox is not None else None
            return Mounts(str(workspace), [(str(f), str(f)) for f in files], [], shown)
        stage = ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c"]
        if not files and inbox is None:
            stage += [STAGE_WORKSPACE, "augure-stage", str(workspace)]
            return Mounts("/tmp", [], stage)
        stage += [STAGE, "augure-stage", str(workspace), str(inbox or ""), *map(str, files)]
        staged = [(f"/tmp/file{n}", str(f)) for n, f in enumerate(files, start=4)]
        return Mounts("/tmp/workspace", staged, [*stage, "--"], "/tmp/inbox" if inbox else None)

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
        if len(ro_files) > MAX_FILES:
            raise SandboxError(f"at most {MAX_FILES} extra files")
        missing = missing_tools(self.as_root)
        if self.config.network and shutil.which("slirp4netns") is None:
            missing.append("slirp4netns (needed by [sandbox] network = true)")
        if missing:
            raise SandboxError(f"not found: {', '.join(missing)}")
        environment = sandbox_env(env)
        fds: list[int] = []
        network = None
        try:
            mounts = self.mounts(workspace, ro_files, inbox)
            passwd_fd = _data_fd(PASSWD.format(uid=self.uid, gid=self.gid), fds)
            group_fd = _data_fd(GROUP.format(gid=self.gid), fds)
            filter_fd = _seccomp_fd(fds)
            if self.config.network:
                network = slirp.UserNetwork(self.as_root, _data_fd(slirp.RESOLV_CONF, fds))
            command = [
                *self.limits(timeout),
                *mounts.stage,
                *self.drop(),
                *self.bwrap(mounts, environment, passwd_fd, group_fd, filter_fd, network),
                "--",
                *argv,
            ]
            return await run_process(
                command,
                timeout=timeout,
                stdin=stdin,
                env=LAUNCH_ENV,
                pass_fds=(*fds, *(network.child_fds() if network else ())),
                on_line=on_line,
                started=network.attach if network else None,
            )
        except OSError as exc:
            raise SandboxError(f"could not start bubblewrap: {exc}") from exc
        finally:
            if network is not None:
                await network.close()
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)


@functools.cache
def supports(option: str) -> bool:
    """Whether the installed bwrap knows `option` (--disable-userns came in 0.8.0)."""
    try:
        shown = subprocess.run(
            ["bwrap", "--help"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return option in shown.stdout + shown.stderr


def _seccomp_fd(opened: list[int]) -> int | None:
    try:
        return _data_fd(seccomp.program(), opened)
    except seccomp.SeccompUnavailable as exc:
        _warn_once(str(exc))
        return None


@functools.cache
def _warn_once(problem: str) -> None:
    log.warning("the sandbox runs without its seccomp filter: %s", problem)


def _data_fd(data: str | bytes, opened: list[int]) -> int:
    """A pipe holding `data`, for bwrap's --ro-bind-data and --seccomp (far below the pipe
    buffer size).

    Numbered 10 or above: the staging script uses 3 to 9 for what it opens itself.
    """
    read, write = os.pipe()
    try:
        os.write(write, data.encode() if isinstance(data, str) else data)
        high = fcntl.fcntl(read, fcntl.F_DUPFD_CLOEXEC, 10)
    finally:
        os.close(write)
        os.close(read)
    opened.append(high)
    return high


def _tasks_of(uid: int) -> int:
    """Threads the user already runs: RLIMIT_NPROC counts them all, not just the sandbox's."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.stat(entry.path).st_uid == uid:
                count += len(os.listdir(f"{entry.path}/task"))
    return count


def _system_files(network: slirp.UserNetwork | None) -> list[str]:
    """The host's programs and libraries, read-only, and the few /etc files they read; with
    a network of its own, the sandbox's resolver instead of the host's."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in USR_MERGED:
        target = Path("/") / name
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            args += ["--ro-bind", str(target), str(target)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_FILES:
        if name == "resolv.conf" and network is not None:
            args += ["--perms", "0644", "--ro-bind-data", str(network.resolv_fd), "/etc/" + name]
        else:
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args
