"""The sandbox's way out when `[sandbox] network = true`: slirp4netns attached to the network
namespace bwrap made for one call.

Sharing the host's network namespace (bwrap --share-net) would put the sandbox on the host's
loopback, beside the dashboard: code inside could call it, or listen on a loopback port that
the owner's browser sends the dashboard's cookie to (cookies ignore ports). Instead the sandbox
keeps its own namespace, and slirp4netns relays its traffic through ordinary sockets of the
host, with `--disable-host-loopback` refusing any connection to the host's 127.0.0.1. What the
sandbox reaches is what another machine could; nothing it listens on appears on the host.

The order matters: bwrap reports its child's pid on `--info-fd` and holds the command on
`--block-fd`; slirp4netns brings the tap device up and says so on `--ready-fd`; only then is
the command let go, so its first connection already has a route (docs/security.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os

from augure.sandbox.base import SandboxError

# slirp4netns's own DNS forwarder (its default 10.0.2.0/24 network): the host's resolver may
# well be on the host's loopback (systemd-resolved's 127.0.0.53), which the sandbox cannot reach.
RESOLV_CONF = "nameserver 10.0.2.3\n"
SETUP_SECONDS = 15.0
STOP_SECONDS = 5.0
# The largest MTU slirp4netns takes; its own documentation's advice for throughput.
MTU = 65520
# ioctl(2) on a namespace file: the user namespace that owns it (linux/nsfs.h).
NS_GET_USERNS = 0xB701
# Descriptors bwrap inherits are numbered from here: the staging script keeps 3 to 9.
FIRST_INHERITED_FD = 10


class UserNetwork:
    """One sandbox's network: the pipes shared with bwrap, then the slirp4netns process."""

    def __init__(self, as_root: bool, resolv_fd: int) -> None:
        self.as_root = as_root
        self.resolv_fd = resolv_fd  # owned by the caller, like the other data descriptors
        self._info_read, info_write = _pipe()
        self._block_read, self._block_write = _pipe()
        self._info_write = info_write
        self._slirp: asyncio.subprocess.Process | None = None
        self._drained: asyncio.Task[tuple[bytes, bytes]] | None = None
        self._exit_write: int | None = None

    def bwrap_args(self) -> list[str]:
        return ["--info-fd", str(self._info_write), "--block-fd", str(self._block_read)]

    def child_fds(self) -> tuple[int, int]:
        return self._info_write, self._block_read

    async def attach(self, bwrap: asyncio.subprocess.Process) -> None:
        """Connect the running sandbox's namespace, then release its command."""
        # bwrap holds its own copies now; ours would keep the info pipe from ever ending.
        _close(self._info_write)
        _close(self._block_read)
        self._info_write = self._block_read = -1
        try:
            async with asyncio.timeout(SETUP_SECONDS):
                info_read, self._info_read = self._info_read, -1
                info = await _read(info_read)
                pid = int(json.loads(info)["child-pid"])
                await self._start(pid)
        except (TimeoutError, ValueError, KeyError, OSError) as exc:
            raise SandboxError(f"could not set up the sandbox's network: {exc!r}") from None
        os.write(self._block_write, b"go")
        _close(self._block_write)
        self._block_write = -1

    async def _start(self, pid: int) -> None:
        ready_read, ready_write = os.pipe()
        exit_read, self._exit_write = os.pipe()
        inherited = [ready_write, exit_read]
        command = [
            "slirp4netns",
            "--configure",
            f"--mtu={MTU}",
            "--disable-host-loopback",
            "--enable-sandbox",
            "--enable-seccomp",
            f"--ready-fd={ready_write}",
            # It ends when this pipe does: with the call, or with the bot if the bot dies.
            f"--exit-fd={exit_read}",
        ]
        try:
            if not self.as_root:
                # Not root: it may enter the namespace only from the user namespace that owns
                # it (bwrap's, the parent of the one --disable-userns leaves the command in).
                netns = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
                inherited.append(netns)
                owner = fcntl.ioctl(netns, NS_GET_USERNS)
                inherited.append(owner)
                command.append(f"--userns-path=/proc/self/fd/{owner}")
            command += ["--netns-type=path", f"/proc/{pid}/ns/net", "tap0"]
            self._slirp = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
                pass_fds=tuple(inherited),
                start_new_session=True,
            )
            # Drained while it runs, so a chatty slirp4netns never blocks on a full pipe.
            self._drained = asyncio.create_task(self._slirp.communicate())
        except BaseException:
            _close(ready_read)
            raise
        finally:
            for fd in inherited:
                _close(fd)
        if await _read(ready_read, 1) != b"1":
            with contextlib.suppress(ProcessLookupError):
                self._slirp.kill()
            _, errors = await self._drained
            said = errors.decode("utf-8", "replace").strip()[-500:]
            raise OSError(f"slirp4netns exited {self._slirp.returncode}: {said}")

    async def close(self) -> None:
        for name in ("_info_write", "_block_read", "_info_read", "_block_write"):
            _close(getattr(self, name))
            setattr(self, name, -1)
        if self._exit_write is not None:
            _close(self._exit_write)
            self._exit_write = None
        if self._slirp is None or self._drained is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._drained), STOP_SECONDS)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self._slirp.kill()
            await self._drained


def _pipe() -> tuple[int, int]:
    """A pipe whose ends are numbered FIRST_INHERITED_FD or above (close-on-exec until
    passed on)."""
    read, write = os.pipe()
    try:
        return (
            fcntl.fcntl(read, fcntl.F_DUPFD_CLOEXEC, FIRST_INHERITED_FD),
            fcntl.fcntl(write, fcntl.F_DUPFD_CLOEXEC, FIRST_INHERITED_FD),
        )
    finally:
        os.close(read)
        os.close(write)


async def _read(fd: int, size: int = -1) -> bytes:
    """Read `size` bytes (or to the end) from a pipe without blocking the event loop; the
    descriptor is closed afterwards."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    try:
        return await (reader.read() if size < 0 else reader.read(size))
    finally:
        transport.close()


def _close(fd: int) -> None:
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)
