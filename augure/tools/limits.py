"""Tool profiles (docs/reference/limits.md): per-origin, per-tool-glob rate and cost limits, counted
in SQLite.

A profile binds some origins (`chat`, `job`, `task:AGENT`, `*` …: any link of a call's origin
chain) and sets limits on the
tools matching each glob. The executor's `limits` step asks `Limits.admit` before anything
runs: either the call is refused with the text the model gets, or its use is reserved, in
one transaction, so two calls at once cannot both take the last slot. A call that is then
stopped before running (the owner rejects it) gives its reservation back.

Its settings are `augure/config/limits.py`. `LimitCounters` names the three store methods it
needs, and the executor hands the store in.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from augure.common.caller import Caller
from augure.common.clock import Clock
from augure.config.limits import Profile, ToolLimit

# Given a check's index and its use so far (this minute, today, cost today): the refusal
# text, or None when one more call still fits.
Over = Callable[[int, int, int, float], str | None]


class LimitCounters(Protocol):
    """Where uses are counted: the store, in one SQLite transaction per reservation."""

    async def reserve_limit_use(
        self, checks: list[tuple[str, str, float]], at: float, day: str, over: Over
    ) -> tuple[str | None, list[int]]: ...

    async def release_limit_use(self, ids: list[int]) -> None: ...

    async def limit_use(
        self, profile: str, glob: str, at: float, day: str
    ) -> tuple[int, int, float]: ...


@dataclass(frozen=True)
class Bound:
    """One limit that applies to a call: which profile, which glob, what it allows."""

    profile: str
    glob: str
    limit: ToolLimit


@dataclass(frozen=True)
class Admission:
    refusal: str | None  # the model's text when refused
    asks: bool  # a profile requires the owner's approval
    reserved: tuple[int, ...] = ()  # counter rows to give back if the call does not run


@dataclass(frozen=True)
class Use:
    """Today's use of one limit, for `augure limits` and `/status`."""

    profile: str
    origins: list[str]
    glob: str
    limit: ToolLimit
    minute: int
    today: int
    cost_today: float


def refusal(which: str, profile: str) -> str:
    return f"Tool call refused: {which} (profile {profile})."


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Limits:
    def __init__(
        self,
        profiles: Mapping[str, Profile],
        store: LimitCounters,
        zone: str,
        clock: Clock = _utc_now,
    ) -> None:
        self.profiles = dict(profiles)
        self.store = store
        self.zone = ZoneInfo(zone)
        # Injectable so tests can move to the next day; an aware datetime.
        self.clock = clock

    def bound(self, caller: Caller, tool: str) -> list[Bound]:
        return [
            Bound(name, glob, limit)
            for name, profile in self.profiles.items()
            if profile.binds(caller)
            for glob, limit in profile.tools.items()
            if fnmatch.fnmatchcase(tool, glob)
        ]

    def _now(self) -> tuple[float, str]:
        now = self.clock()
        return now.timestamp(), now.astimezone(self.zone).date().isoformat()

    async def admit(self, caller: Caller | str, tool: str) -> Admission:
        """`caller` may be given as its chain's spelling (`chat>background`)."""
        who = caller if isinstance(caller, Caller) else Caller.of(caller)
        bound = self.bound(who, tool)
        asks = any(b.limit.requires_approval for b in bound)
        counted = [b for b in bound if _counts(b.limit)]
        if not counted:
            return Admission(None, asks)
        at, day = self._now()
        checks = [(b.profile, b.glob, b.limit.cost_per_call) for b in counted]

        def over(index: int, minute: int, today: int, cost: float) -> str | None:
            b = counted[index]
            limit = b.limit
            if limit.per_minute is not None and minute >= limit.per_minute:
                return refusal(f"per_minute limit of {limit.per_minute} for {b.glob}", b.profile)
            if limit.per_day is not None and today >= limit.per_day:
                return refusal(f"per_day limit of {limit.per_day} for {b.glob}", b.profile)
            spent = cost + limit.cost_per_call
            if limit.max_cost_per_day is not None and spent > limit.max_cost_per_day + 1e-9:
                return refusal(
                    f"max_cost_per_day of ${limit.max_cost_per_day:.2f} for {b.glob} "
                    f"(${cost:.2f} spent today)",
                    b.profile,
                )
            return None

        refused, reserved = await self.store.reserve_limit_use(checks, at, day, over)
        return Admission(refused, asks, tuple(reserved))

    async def release(self, reserved: tuple[int, ...]) -> None:
        if reserved:
            await self.store.release_limit_use(list(reserved))

    async def usage(self) -> list[Use]:
        at, day = self._now()
        uses = []
        for name, profile in self.profiles.items():
            for glob, limit in profile.tools.items():
                minute, today, cost = await self.store.limit_use(name, glob, at, day)
                uses.append(Use(name, profile.origins, glob, limit, minute, today, cost))
        return uses


def _counts(limit: ToolLimit) -> bool:
    return (
        limit.per_minute is not None
        or limit.per_day is not None
        or limit.max_cost_per_day is not None
        or limit.cost_per_call > 0
    )


def describe(use: Use) -> str:
    """One line for a person: each limit with today's use."""
    parts = []
    limit = use.limit
    if limit.per_minute is not None:
        parts.append(f"{use.minute}/{limit.per_minute} this minute")
    if limit.per_day is not None:
        parts.append(f"{use.today}/{limit.per_day} today")
    if limit.max_cost_per_day is not None:
        parts.append(f"${use.cost_today:.2f}/${limit.max_cost_per_day:.2f} today")
    elif limit.cost_per_call:
        parts.append(f"${use.cost_today:.2f} today")
    if limit.requires_approval:
        parts.append("asks for approval")
    shown = "; ".join(parts) or "no limit"
    return f"{use.profile} ({', '.join(use.origins)}) {use.glob}: {shown}"
