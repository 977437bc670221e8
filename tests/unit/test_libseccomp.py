"""The vendored libseccomp binding, proven on real processes: a child Python loads the
exported BPF program into its own kernel filter and tries the calls (docs/security.md)."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from augure.sandbox import libseccomp, seccomp

pytestmark = pytest.mark.system_package("libseccomp2")

FIONREAD = 0x541B
ROOT = Path(__file__).resolve().parents[2]

# Loads the BPF program named by argv[1] (unless it is "-") the way bwrap does (no_new_privs,
# then PR_SET_SECCOMP), then reports what each call returned: "ok" or the errno's name.
CHILD = r"""
import ctypes, errno, json, os, sys, tempfile

libc = ctypes.CDLL(None, use_errno=True)
word = ctypes.c_ulong

class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint32)]

class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

if sys.argv[1] != "-":
    program = open(sys.argv[1], "rb").read()
    instructions = (SockFilter * (len(program) // 8)).from_buffer_copy(program)
    fprog = SockFprog(len(instructions), instructions)
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if libc.prctl(PR_SET_NO_NEW_PRIVS, word(1), word(0), word(0), word(0)) != 0:
        sys.exit("no_new_privs refused")
    if libc.prctl(PR_SET_SECCOMP, word(SECCOMP_MODE_FILTER), ctypes.byref(fprog), word(0),
                  word(0)) != 0:
        sys.exit("the kernel refused the filter: " + os.strerror(ctypes.get_errno()))

def outcome(result):
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]

read_end, _ = os.pipe()
byte, count = ctypes.c_char(b"x"), ctypes.c_int()
with tempfile.TemporaryDirectory() as scratch:
    os.mkdir(os.path.join(scratch, "made"))
    made = "ok"
print(json.dumps({
    "ptrace": outcome(libc.ptrace(word(0), word(0), None, None)),  # PTRACE_TRACEME
    "tiocsti": outcome(libc.ioctl(read_end, word(0x5412), ctypes.byref(byte))),
    "fionread": outcome(libc.ioctl(read_end, word(0x541B), ctypes.byref(count))),
    "clone3": outcome(libc.syscall(word(435), None, word(0))),
    "unshare_user": outcome(libc.unshare(0x10000000)),
    "mkdir": made,
}))
"""


def run_under(program: bytes | None, tmp_path: Path) -> dict[str, str]:
    """What each call returned in a fresh child, under `program` (None: no filter)."""
    path = "-"
    if program is not None:
        (tmp_path / "filter.bpf").write_bytes(program)
        path = str(tmp_path / "filter.bpf")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, path], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    outcomes: dict[str, str] = json.loads(done.stdout)
    return outcomes


def test_a_rule_refuses_its_call_with_the_chosen_errno_and_nothing_else(tmp_path: Path) -> None:
    with libseccomp.Filter(libseccomp.ALLOW) as built:
        built.add_rule(libseccomp.errno_action(errno.EACCES), "ptrace")
        program = built.export_bpf()
    assert program and len(program) % 8 == 0  # whole `struct sock_filter` instructions

    bare, filtered = run_under(None, tmp_path), run_under(program, tmp_path)
    assert bare["ptrace"] == "ok"
    assert filtered["ptrace"] == "EACCES"
    assert filtered["fionread"] == filtered["mkdir"] == "ok"


def test_an_argument_condition_narrows_the_rule_to_one_request(tmp_path: Path) -> None:
    with libseccomp.Filter(libseccomp.ALLOW) as built:
        on_fionread = libseccomp.masked_eq(1, 0xFFFFFFFF, FIONREAD)
        built.add_rule(libseccomp.errno_action(errno.EXDEV), "ioctl", on_fionread)
        program = built.export_bpf()

    filtered = run_under(program, tmp_path)
    assert filtered["fionread"] == "EXDEV"
    assert filtered["tiocsti"] == "ENOTTY"  # another ioctl request: the kernel's own answer


def test_the_sandbox_filter_refuses_what_it_lists_and_allows_the_rest(tmp_path: Path) -> None:
    bare, filtered = run_under(None, tmp_path), run_under(seccomp.program(), tmp_path)
    assert (bare["ptrace"], bare["tiocsti"], bare["clone3"]) == ("ok", "ENOTTY", "EINVAL")
    assert filtered["ptrace"] == "EPERM"
    assert filtered["tiocsti"] == "EPERM"
    assert filtered["unshare_user"] == "EPERM"
    # clone3's flags are out of a filter's reach: ENOSYS sends libc back to clone.
    assert filtered["clone3"] == "ENOSYS"
    assert filtered["fionread"] == filtered["mkdir"] == "ok"


def test_an_unknown_call_is_told_apart_from_a_refused_rule() -> None:
    with libseccomp.Filter(libseccomp.ALLOW) as built:
        with pytest.raises(libseccomp.UnknownSyscall, match="no_such_call"):
            built.add_rule(libseccomp.errno_action(errno.EPERM), "no_such_call")
        with pytest.raises(OSError, match="seccomp_rule_add"):
            # A rule whose action is the filter's default is refused (EACCES) by libseccomp.
            built.add_rule(libseccomp.ALLOW, "ptrace")
    with pytest.raises(ValueError, match="released"):
        built.export_bpf()


def test_the_version_is_the_loaded_library_s() -> None:
    assert re.fullmatch(r"2\.\d+\.\d+", libseccomp.version())


def loaded_library_file() -> str:
    libseccomp.library()
    maps = Path("/proc/self/maps").read_text().splitlines()
    (path,) = {line.split()[-1] for line in maps if "/libseccomp.so" in line}
    return os.path.realpath(path)


def test_doctor_names_libseccomp_in_one_line() -> None:
    from augure.cli import doctor

    made = f"libseccomp {libseccomp.version()} builds the sandbox's system call filter"
    assert doctor._seccomp().line() == f"ok    seccomp: {made}"


@pytest.mark.system_package("util-linux")
def test_doctor_names_a_missing_libseccomp_in_one_line() -> None:
    """The library hidden in a private mount namespace, as on a system without libseccomp2."""
    hide = f'mount --bind /dev/null "{loaded_library_file()}" && exec "$@"'
    show = "from augure.cli import doctor; print(doctor._seccomp().line())"
    hidden = ["unshare", "--mount", "--map-root-user", "sh", "-c", hide, "-"]
    done = subprocess.run(
        [*hidden, sys.executable, "-c", show],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("warn  seccomp: libseccomp (libseccomp.so.2) cannot be loaded: ")
    assert line.endswith(
        "(Debian package libseccomp2): the sandbox runs without its system call filter"
    )
