"""Hooks for the whole suite: tests needing a system package skip, or fail under CI; the
calendar tests' Radicale server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.system import REQUIRE_VARIABLE, cannot_run, missing

if TYPE_CHECKING:  # caldav, the calendar extra, is imported only by the tests that use it
    from tests.radicale import Radicale


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "system_package(name): needs this Debian package; skipped without it unless "
        f"{REQUIRE_VARIABLE}=1, which makes its absence a failure",
    )
    config.addinivalue_line(
        "markers",
        "tools(*tools, reset=None): the tools the e2e app is started with (the `extra_tools` "
        "fixture); `reset()` runs before each test",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Runs before the test's fixtures, so a module-scoped Chromium or dovecot is never started.
    for mark in item.iter_markers("system_package"):
        reason = missing(mark.args[0])
        if reason is None:
            continue
        cannot_run(reason)


@pytest.fixture(scope="module")
def radicale_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Radicale]:
    from tests.radicale import Radicale

    with Radicale(tmp_path_factory.mktemp("radicale")) as server:
        yield server


@pytest.fixture
def radicale(radicale_server: Radicale) -> Radicale:
    """A Radicale with one empty calendar, Personal."""
    radicale_server.clear()
    radicale_server.calendar("Personal")
    return radicale_server
