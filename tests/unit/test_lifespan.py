"""The one start and stop order (augure.core.lifespan): recorded as it runs, reversed on the way
down, and a step that fails closes every step already started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from augure.common.ports import NOT_KNOWN, ApprovalRequest, Attachment, Decide, Sources, Verdict
from augure.config.settings import load_config
from augure.core.door.doors import Door
from augure.core.lifespan import Augure
from augure.host.home import HomeError, HomeLock

SERVING = [
    "home lock",
    "store",
    "services",
    "skills",
    "mcp",
    "channel",
    "recovery",
    "listening",
    "scheduler",
    "heartbeat",
    "forget requests",
    "dashboard",
    "settle",
]
# Steps with nothing to undo (recovery, listening) leave no `stop` entry.
STOPPED = [step for step in reversed(SERVING) if step not in ("recovery", "listening")]


class Inbound:
    """A channel's receiving side that records what the lifespan asked of it."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.front: Door | None = None

    async def open(self, front: Door) -> None:
        self.front = front
        self.calls.append("open")

    async def listen(self) -> None:
        self.calls.append("listen")

    async def close(self) -> None:
        self.calls.append("close")

    async def send(self, chat_id: str, markdown: str, sources: Sources = NOT_KNOWN) -> None: ...

    async def edit(self, chat_id: str, message_id: int, markdown: str) -> None: ...

    async def deliver(self, chat_id: str, artifact: Attachment) -> None: ...


class Companion:
    name = "dashboard"

    def __init__(self, fails: bool = False) -> None:
        self.fails = fails
        self.calls: list[str] = []

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any] | None:
        return None

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        return None

    async def start(self, front: Door) -> None:
        self.calls.append("start")
        if self.fails:
            raise RuntimeError("the port is taken")

    async def stop(self) -> None:
        self.calls.append("stop")


def started(steps: list[str]) -> list[str]:
    return [step.removeprefix("start ") for step in steps if step.startswith("start ")]


def stopped(steps: list[str]) -> list[str]:
    return [step.removeprefix("stop ") for step in steps if step.startswith("stop ")]


async def test_steps_start_in_one_order_and_stop_in_its_reverse(tmp_path: Path) -> None:
    inbound, companion = Inbound(), Companion()
    async with Augure.opened(
        load_config(home=tmp_path),
        notifier=inbound,
        inbound=inbound,
        companions=[companion],
        home_lock=HomeLock(tmp_path),
    ) as opened:
        front = opened.door
        assert started(front.steps) == SERVING and stopped(front.steps) == []
        with pytest.raises(HomeError):  # the home is held while it runs
            HomeLock(tmp_path).acquire()
        core = opened.core
        assert core is not None and core.scheduler._task is not None
    assert stopped(front.steps) == STOPPED
    assert inbound.calls == ["open", "listen", "close"] and companion.calls == ["start", "stop"]
    assert core.scheduler._task.done()
    HomeLock(tmp_path).acquire()  # released on the way down


async def test_a_command_without_a_channel_opens_the_core_only(tmp_path: Path) -> None:
    async with Augure.opened(load_config(home=tmp_path)) as opened:
        front = opened.door
        assert started(front.steps) == ["store", "services", "skills", "mcp", "settle"]
        core = opened.core
        assert core is not None and core.scheduler._task is None  # no jobs run in `augure chat`
    assert stopped(front.steps) == ["settle", "mcp", "skills", "services", "store"]


async def test_a_failing_step_closes_every_step_already_started(tmp_path: Path) -> None:
    inbound, companion = Inbound(), Companion(fails=True)
    with pytest.raises(RuntimeError, match="the port is taken"):
        async with Augure.running(
            load_config(home=tmp_path),
            notifier=inbound,
            inbound=inbound,
            companions=[companion],
            home_lock=HomeLock(tmp_path),
        ):
            raise AssertionError("never reached: the dashboard did not start")
    assert inbound.front is not None
    steps = inbound.front.steps
    assert started(steps) == SERVING[: SERVING.index("dashboard")]
    assert stopped(steps) == [step for step in STOPPED if step not in ("settle", "dashboard")]
    assert inbound.calls == ["open", "listen", "close"]
    HomeLock(tmp_path).acquire()
