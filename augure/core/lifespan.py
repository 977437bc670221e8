"""The one start and stop order of Augure: `async with Augure.running(config, ...) as door`.

Every way in (`augure run`, `augure chat`, the CLI commands that need the core, the tests'
harness, the benchmarks) opens the core here, so the order exists once. Each step is entered on
one `AsyncExitStack`: the way down is the way up reversed, and a step that fails closes every
step already started. Each step is recorded in `Door.steps` as it starts and as it stops.
See docs/architecture.md, "The composition root and the lifespan".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Protocol, TypedDict, Unpack

from augure.common.ports import Approver, Notifier
from augure.common.progress import Progress
from augure.config.settings import Config
from augure.core.app import Core, Wiring, build_core
from augure.core.door.doors import Door, ReadingDoor
from augure.core.forgetting import ForgetRequests
from augure.core.recovery import recover
from augure.core.standalone import Standalone
from augure.host.home import HomeLock
from augure.llm.models import ChatModel
from augure.store.state import Store
from augure.tools import browser
from augure.tools.base import Tool

Stop = Callable[[], Awaitable[None]]


class Inbound(Protocol):
    """A channel's receiving side (Telegram's polling). `open` once the core is built: the
    channel can send from then on, and recovery's notices go out through it; `listen` once
    what the last run cut off is settled; `close` on the way down."""

    async def open(self, door: Door) -> None: ...

    async def listen(self) -> None: ...

    async def close(self) -> None: ...


class Companion(Approver, Protocol):
    """Served in the bot's process beside the channel (the dashboard): one of the gate's
    approvers, started last and stopped first of what serves the owner."""

    async def start(self, door: Door) -> None: ...

    async def stop(self) -> None: ...


class Steps:
    """The exit stack, with a journal of each step as it starts and as it stops."""

    def __init__(self, stack: AsyncExitStack, journal: list[str]) -> None:
        self.stack = stack
        self.journal = journal

    def started(self, name: str, stop: Stop | None = None) -> None:
        self.journal.append(f"start {name}")
        if stop is not None:
            self.stack.push_async_callback(self._stop, name, stop)

    async def _stop(self, name: str, stop: Stop) -> None:
        await stop()
        self.journal.append(f"stop {name}")


class Plugs(TypedDict, total=False):
    """What `Augure.running` is given besides the config (`Augure.opened` names each)."""

    approvers: Sequence[Approver]
    notifier: Notifier | None
    progress: Progress | None
    model: ChatModel | None
    extra_tools: Sequence[Tool]
    inbound: Inbound | None
    companions: Sequence[Companion]
    home_lock: HomeLock | None


@dataclass(frozen=True)
class Opened:
    """The door and the parts behind it: for the tests and the benchmarks, which look at the
    parts; everything else goes through the door (`Augure.running`)."""

    door: Door
    core: Core


class Augure:
    """The way in. `running` serves; `inbound` given, it also recovers, polls and runs the
    scheduler, the heartbeat and the companions (`augure run`); without one it is the core a
    command or a test talks to directly (`augure chat`, `augure tools run`). `reading` opens
    the home's state with nothing that runs (`augure dashboard`, the CLI's commands)."""

    @staticmethod
    @asynccontextmanager
    async def running(config: Config, **plugs: Unpack[Plugs]) -> AsyncIterator[Door]:
        async with Augure.opened(config, **plugs) as opened:
            yield opened.door

    @staticmethod
    @asynccontextmanager
    async def opened(
        config: Config,
        *,
        approvers: Sequence[Approver] = (),
        notifier: Notifier | None = None,
        progress: Progress | None = None,
        model: ChatModel | None = None,
        extra_tools: Sequence[Tool] = (),
        inbound: Inbound | None = None,
        companions: Sequence[Companion] = (),
        home_lock: HomeLock | None = None,
    ) -> AsyncIterator[Opened]:
        """As `running`, with the parts beside the door (the tests' and the benchmarks')."""
        wiring = Wiring(
            extra_tools=extra_tools,
            model=model,
            approvers=[*approvers, *companions],
            notifier=notifier,
            progress=progress,
        )
        journal: list[str] = []
        async with AsyncExitStack() as stack:
            steps = Steps(stack, journal)
            if home_lock is not None:
                home_lock.acquire()
                steps.started("home lock", _released(home_lock))
            core = await _open_core(config, wiring, steps)
            door = Door(core, journal)
            if inbound is not None:
                await _serve(core, door, inbound, notifier, steps)
            for companion in companions:
                await companion.start(door)
                steps.started(companion.name, companion.stop)
            # Entered last, so it runs first on the way down: background work stops (its
            # rows stay `running`, for the next start's notice) and waiting approvals are
            # rejected, so no turn blocked on a button holds up the channel's stop.
            steps.started("settle", lambda: _settle(core))
            yield Opened(door, core)

    @staticmethod
    @asynccontextmanager
    async def reading(
        config: Config, *, started_at: float | None = None, reject_stale: bool = False
    ) -> AsyncIterator[ReadingDoor]:
        """The home's state, nothing that runs (augure.core.standalone): `augure dashboard`'s
        own process, the CLI's commands. `started_at` is when a bot beside it started;
        `reject_stale`, with no bot on the home, rejects what a stopped bot left pending."""
        store = await Store.open(config.db_path)
        state = Standalone.on(config, store, started_at=started_at)
        try:
            if reject_stale:
                # What a stopped bot left pending will never run: rejected as a bot's start
                # does, so no press "approves" a call no process is waiting to make. Beside a
                # running bot those requests are its own, waiting for an answer: left alone.
                await state.gate.reject_stale()
            yield ReadingDoor(state)
        finally:
            await state.close()
            await store.close()


async def _open_core(config: Config, wiring: Wiring, steps: Steps) -> Core:
    config.home.mkdir(parents=True, exist_ok=True)
    store = await Store.open(config.db_path)
    steps.started("store", store.close)
    core = build_core(config, store, wiring)
    steps.started("services", lambda: _close_services(core))
    await core.skills.install_bundled()
    core.skills.watch()
    steps.started("skills", core.skills.close)
    # MCP servers start in the background: their tools appear as each server is ready; a
    # turn waits for those still starting up to `[mcp] startup_timeout_seconds`.
    registry = core.registry
    if core.mcp.servers:
        # The adapter (and the MCP client) load only with a configured server
        # (docs/performance.md).
        from augure.mcp.adapter import register as register_mcp_tools

        core.mcp.start(lambda server, listed: register_mcp_tools(registry, config, server, listed))
    steps.started("mcp", core.mcp.close)
    return core


async def _serve(
    core: Core, door: Door, inbound: Inbound, notifier: Notifier | None, steps: Steps
) -> None:
    await inbound.open(door)
    steps.started("channel", inbound.close)
    if notifier is not None:
        # Before listening: what the last run cut off is settled before anything new runs.
        await recover(core.store, core.audit, core.gate, notifier)
        steps.started("recovery")
    await inbound.listen()
    steps.started("listening")
    await core.scheduler.start()
    steps.started("scheduler", core.scheduler.stop)
    core.heartbeat.start()
    steps.started("heartbeat", core.heartbeat.stop)
    forget_requests = ForgetRequests(
        core.store, core.audit, core.gate, core.agent, core.config.home
    )
    forget_requests.start()
    steps.started("forget requests", forget_requests.stop)
    if core.indexer is not None:
        core.indexer.start()
        steps.started("recall indexer", core.indexer.stop)


async def _settle(core: Core) -> None:
    await core.tasks.close()
    await core.gate.close()


async def _close_services(core: Core) -> None:
    await core.gate.close()
    await browser.shutdown()
    await core.models.close()
    await core.llm.close()


def _released(home_lock: HomeLock) -> Stop:
    async def release() -> None:
        home_lock.release()

    return release
