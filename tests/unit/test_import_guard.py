"""The collector pause around start-up's imports (augure.common.import_guard.collector_paused)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from augure.common.import_guard import collector_paused


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was_enabled = gc.isenabled()
    yield
    gc.unfreeze()  # the frozen objects go back to the oldest generation, as before
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_the_collector_is_off_within_and_on_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_what_the_block_made_is_set_aside_for_good() -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    with collector_paused():
        made = [{"kept": n} for n in range(1_000)]
    assert gc.get_freeze_count() >= len(made)


def test_a_collector_turned_off_before_stays_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_an_error_in_the_block_still_turns_the_collector_back_on() -> None:
    gc.enable()
    with pytest.raises(ImportError), collector_paused():
        raise ImportError("no such module")
    assert gc.isenabled()
