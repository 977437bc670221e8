"""A ctypes binding of the few libseccomp calls the sandbox's filter is built with.

Written against libseccomp's documented C API (seccomp_init(3), seccomp_rule_add(3),
seccomp_syscall_resolve_name(3), seccomp_export_bpf(3), seccomp_version(3)) and loaded from
the system's `libseccomp.so.2` (Debian package libseccomp2). It replaces a binding package
whose last release was in 2021: the sandbox's security path now rests on the system library
and these lines alone, each exercised by tests/unit/test_libseccomp.py.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import tempfile
from dataclasses import dataclass
from types import TracebackType

from augure.common.errors import Unavailable

# Actions, as seccomp.h defines them (SCMP_ACT_ALLOW, SCMP_ACT_ERRNO(x)).
ALLOW = 0x7FFF0000
_ACTION_ERRNO = 0x00050000
# enum scmp_compare: SCMP_CMP_MASKED_EQ, "(arg & datum_a) == datum_b".
MASKED_EQ = 7
# What seccomp_syscall_resolve_name returns for a name this libseccomp does not know.
_NR_SCMP_ERROR = -1
DEBIAN_PACKAGE = "libseccomp2"


class LibseccompMissing(Unavailable):
    """libseccomp.so.2 is not installed, or cannot be loaded."""


class UnknownSyscall(Unavailable):
    """The name is not a system call this libseccomp knows (an older release, say)."""


def errno_action(code: int) -> int:
    """SCMP_ACT_ERRNO(code): the call fails with `code` and never reaches the kernel."""
    return _ACTION_ERRNO | (code & 0xFFFF)


@dataclass(frozen=True)
class ArgCondition:
    """One `struct scmp_arg_cmp`: a rule matches only when the argument passes it."""

    index: int
    op: int
    datum_a: int
    datum_b: int = 0


def masked_eq(index: int, mask: int, value: int) -> ArgCondition:
    """Matches when argument `index`, masked with `mask`, equals `value`."""
    return ArgCondition(index, MASKED_EQ, mask, value)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("micro", ctypes.c_uint)]


@functools.cache
def library() -> ctypes.CDLL:
    """The loaded libseccomp with its signatures declared; LibseccompMissing if absent."""
    found = ctypes.util.find_library("seccomp")
    if found is None:
        raise LibseccompMissing(f"libseccomp is not installed (Debian package {DEBIAN_PACKAGE})")
    try:
        lib = ctypes.CDLL(found)
    except OSError as exc:
        raise LibseccompMissing(
            f"libseccomp ({found}) cannot be loaded: {exc} (Debian package {DEBIAN_PACKAGE})"
        ) from None
    # Declared, not left to ctypes' int default: the filter context is a pointer.
    lib.seccomp_init.argtypes = (ctypes.c_uint32,)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_release.argtypes = (ctypes.c_void_p,)
    lib.seccomp_release.restype = None
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = (
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    )
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = (ctypes.c_void_p, ctypes.c_int)
    lib.seccomp_export_bpf.restype = ctypes.c_int
    lib.seccomp_version.argtypes = ()
    lib.seccomp_version.restype = ctypes.POINTER(_Version)
    return lib


def version() -> str:
    """The loaded libseccomp's release, e.g. "2.5.4"."""
    found = library().seccomp_version().contents
    return f"{found.major}.{found.minor}.{found.micro}"


def _check(result: int, call: str) -> None:
    # libseccomp returns -errno on failure.
    if result < 0:
        raise OSError(-result, f"{call}: {os.strerror(-result)}")


class Filter:
    """A filter under construction (a `scmp_filter_ctx`), released on close or exit.

    libseccomp admits the native architecture only: a call made through another one (i386's
    `int 0x80` on x86_64) kills the process."""

    def __init__(self, default_action: int) -> None:
        self._lib = library()
        self._context: int | None = self._lib.seccomp_init(default_action)
        if not self._context:
            raise OSError(errno.EINVAL, f"seccomp_init refused the action {default_action:#x}")

    def add_rule(self, action: int, syscall: str, *conditions: ArgCondition) -> None:
        """`action` for `syscall` when every condition holds (always, with none)."""
        number = self._lib.seccomp_syscall_resolve_name(syscall.encode())
        if number == _NR_SCMP_ERROR:
            raise UnknownSyscall(f"libseccomp {version()} does not know the call {syscall}")
        array = (_ArgCmp * len(conditions))(
            *(_ArgCmp(c.index, c.op, c.datum_a, c.datum_b) for c in conditions)
        )
        result = self._lib.seccomp_rule_add_array(
            self._live(), action, number, len(conditions), array
        )
        _check(result, f"seccomp_rule_add({syscall})")

    def export_bpf(self) -> bytes:
        """The compiled BPF program, as the kernel (and bwrap's --seccomp) loads it."""
        # libseccomp 2.5 exports to a file descriptor only.
        with tempfile.TemporaryFile() as exported:
            _check(self._lib.seccomp_export_bpf(self._live(), exported.fileno()), "export")
            exported.seek(0)
            return exported.read()

    def close(self) -> None:
        if self._context:
            self._lib.seccomp_release(self._context)
            self._context = None

    def _live(self) -> int:
        if not self._context:
            raise ValueError("the filter was released")
        return self._context

    def __enter__(self) -> Filter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
