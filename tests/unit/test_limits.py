"""Limits counted in a real state.db with an injected clock: minutes, days, origins, TOML."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from augure.config.limits import Profile, ToolLimit
from augure.config.settings import load_config
from augure.store.state import Store
from augure.tools.limits import Limits


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "state.db")
    yield opened
    await opened.close()


async def test_per_minute_counts_the_last_sixty_seconds(store: Store) -> None:
    clock = Clock()
    profiles = {"calm": Profile(tools={"http*": ToolLimit(per_minute=2)})}
    limits = Limits(profiles, store, "UTC", clock)
    assert (await limits.admit("chat", "http")).refusal is None
    clock.now += timedelta(seconds=30)
    assert (await limits.admit("chat", "http_get")).refusal is None  # the glob shares one count
    refused = await limits.admit("chat", "http")
    assert refused.refusal == "Tool call refused: per_minute limit of 2 for http* (profile calm)."
    assert (await limits.admit("chat", "email")).refusal is None  # not matched
    clock.now += timedelta(seconds=31)  # the first call is more than 60 s old
    assert (await limits.admit("chat", "http")).refusal is None


async def test_origins_bind_by_glob_and_a_released_call_does_not_count(store: Store) -> None:
    profiles = {"agents": Profile(origins=["task:*"], tools={"*": ToolLimit(per_day=1)})}
    limits = Limits(profiles, store, "UTC", Clock())
    assert (await limits.admit("chat", "x")).reserved == ()  # not bound: nothing counted
    first = await limits.admit("task:researcher", "x")
    assert first.refusal is None and len(first.reserved) == 1
    assert (await limits.admit("task:writer", "y")).refusal is not None
    await limits.release(first.reserved)
    assert (await limits.admit("task:writer", "y")).refusal is None
    (use,) = await limits.usage()
    assert (use.profile, use.today, use.minute) == ("agents", 1, 1)


async def test_requires_approval_is_reported_without_counting(store: Store) -> None:
    profiles = {
        "careful": Profile(origins=["job"], tools={"memory_*": ToolLimit(requires_approval=True)})
    }
    limits = Limits(profiles, store, "UTC", Clock())
    assert (await limits.admit("job", "memory_read")).asks
    assert not (await limits.admit("chat", "memory_read")).asks


def test_profiles_load_from_toml_with_quoted_globs(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text(
        '[profiles.mail]\norigins = ["chat", "job"]\n'
        '[profiles.mail.tools."email*"]\nper_day = 5\nmax_cost_per_day = 1.5\n',
        encoding="utf-8",
    )
    config = load_config(home=tmp_path)
    limit = config.profiles["mail"].tools["email*"]
    assert config.profiles["mail"].origins == ["chat", "job"]
    assert (limit.per_day, limit.max_cost_per_day, limit.per_minute) == (5, 1.5, None)
