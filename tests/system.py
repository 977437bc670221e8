"""System packages some tests drive for real, and how to tell whether each is installed.

A test marked `@pytest.mark.system_package("chromium")` is skipped, with the Debian package
named, when the package is missing; `AUGURE_REQUIRE_SYSTEM_PACKAGES=1` (set by CI) turns that
skip into a failure, so a broken CI image cannot pass by skipping (see tests/conftest.py).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
from collections.abc import Callable
from typing import NoReturn

REQUIRE_VARIABLE = "AUGURE_REQUIRE_SYSTEM_PACKAGES"


def _chromium() -> bool:
    from augure.tools.browser.settings import BrowserSettings, find_executable

    return find_executable(BrowserSettings()) is not None


def _dovecot() -> bool:
    return shutil.which("dovecot") is not None or os.path.exists("/usr/sbin/dovecot")


def _bwrap() -> bool:
    return shutil.which("bwrap") is not None


def _libseccomp() -> bool:
    from augure.sandbox.seccomp import SeccompUnavailable, program

    try:
        program()
    except SeccompUnavailable:
        return False
    return True


def _unshare() -> bool:
    return shutil.which("unshare") is not None


def _slirp4netns() -> bool:
    return shutil.which("slirp4netns") is not None


def _opusenc() -> bool:
    return shutil.which("opusenc") is not None


# Debian package name -> whether it is installed here.
PACKAGES: dict[str, Callable[[], bool]] = {
    "chromium": _chromium,
    "bubblewrap": _bwrap,
    "dovecot-imapd": _dovecot,
    "util-linux": _unshare,
    "libseccomp2": _libseccomp,
    "slirp4netns": _slirp4netns,
    "opus-tools": _opusenc,
}


def missing(package: str) -> str | None:
    """None when installed; otherwise the skip reason naming the package."""
    if package not in PACKAGES:
        raise ValueError(f"unknown system package {package!r}; add it to tests/system.py")
    if PACKAGES[package]():
        return None
    return f"needs the Debian package {package} (apt-get install {package})"


def required() -> bool:
    return os.environ.get(REQUIRE_VARIABLE, "") == "1"


def cannot_run(reason: str) -> NoReturn:
    """Skip, saying what is missing; fail instead where skipping is forbidden (CI)."""
    import pytest

    if required():
        pytest.fail(f"{reason}; {REQUIRE_VARIABLE}=1 forbids skipping", pytrace=False)
    pytest.skip(reason)


def outward_address() -> str:
    """This machine's address on its default route (what `ip route get 1` names): a place
    the sandbox's network may reach, standing for the outside world. Without one the test
    skips, naming why; with AUGURE_REQUIRE_SYSTEM_PACKAGES=1 (CI) that is a failure."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))  # UDP: nothing is sent, the route is only chosen
            address = str(probe.getsockname()[0])
        except OSError:
            address = "127.0.0.1"
    if not ipaddress.ip_address(address).is_loopback:
        return address
    cannot_run(
        "needs a non-loopback address on this machine (a default route) to stand for outside"
    )
