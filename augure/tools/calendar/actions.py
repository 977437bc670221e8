"""What the `calendar` tool does once called (tool.py declares it): the call's arguments read
in the owner's zone, each action's round trips off the event loop, and the listings. Loaded at
the tool's first call, with icalendar and the CalDAV client (docs/performance.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, TypeVar

from augure.common.links import without_login
from augure.config.settings import Config
from augure.tools.base import RunContext, ToolResult
from augure.tools.calendar import events, server
from augure.tools.calendar.events import Event, EventError
from augure.tools.calendar.server import CalendarUnreachable, EventNotFound
from augure.tools.calendar.settings import (
    CALL_SECONDS,
    NAME,
    WRITES,
    CalendarSettings,
    calendar_settings,
)
from augure.tools.result import relayed_source

LIST_DAYS = 8  # today and the next 7 days
SEARCH_DAYS_BACK, SEARCH_DAYS = 30, 400  # a search without a range: a month back, a year on
SHOWN_MAX = 100
T = TypeVar("T")


def _owners(settings: CalendarSettings, config: Config) -> frozenset[str]:
    """The owner's own addresses: an event they organised is not outside content."""
    mail = config.tools.section("email")
    found = [settings.username, mail.get("username"), mail.get("from_address")]
    return frozenset(str(a).strip().lower() for a in found if a and "@" in str(a))


@dataclass(frozen=True)
class CalendarRequest:
    """A call's arguments, with its times read in the owner's zone."""

    action: str
    calendar: str | None
    event_id: str | None
    title: str | None
    start: date | datetime | None
    end: date | datetime | None
    all_day: bool | None
    location: str | None
    description: str | None
    recurrence: str | None


def _asked(arguments: dict[str, Any], zone: Any) -> CalendarRequest:
    def when(key: str) -> date | datetime | None:
        text = arguments.get(key)
        return events.parse_when(text, zone) if text else None

    keep = ("title", "all_day", "location", "description", "recurrence", "event_id")
    return CalendarRequest(
        action=arguments["action"],
        calendar=arguments.get("calendar"),
        start=when("start"),
        end=when("end"),
        **{key: arguments.get(key) for key in keep},
    )


@dataclass(frozen=True)
class Plan:
    """What a write will do: in which calendar, the event before and after."""

    calendar: str
    before: Event | None
    after: Event | None
    stored: str | None  # the event's text on the server (update, delete)


def _plan(principal: Any, asked: CalendarRequest, default: str | None) -> tuple[Plan, Any]:
    wanted = asked.calendar or default
    if asked.action == "create":
        found = server.chosen(principal, wanted)
        new = events.changed(None, **_changes(asked))
        return Plan(server.name_of(found), None, new, None), found
    if not asked.event_id:
        raise EventError(f"{asked.action} needs the event_id that list or search shows")
    stored, item = server.by_uid(principal, wanted, asked.event_id)
    before = events.master(stored.ical)
    after = events.changed(before, **_changes(asked)) if asked.action == "update" else None
    return Plan(stored.calendar, before, after, stored.ical), item


def _changes(asked: CalendarRequest) -> dict[str, Any]:
    keys = ("title", "start", "end", "all_day", "location", "description", "recurrence")
    return {key: getattr(asked, key) for key in keys}


def _shown(plan: Plan, zone: Any) -> dict[str, Any]:
    shown: dict[str, Any] = {"in calendar": plan.calendar}
    if plan.after is not None:
        shown["the event as it will be"] = events.shown(plan.after, zone)
    if plan.before is not None:
        label = "the event it deletes" if plan.after is None else "the event as it is now"
        shown[label] = events.shown(plan.before, zone)
    return shown


def _write(principal: Any, asked: CalendarRequest, default: str | None, zone: Any) -> str:
    plan, found = _plan(principal, asked, default)
    if asked.action == "delete":
        found.delete()
        title = plan.before.title if plan.before else asked.event_id
        return f"Deleted {title!r} from {plan.calendar}."
    assert plan.after is not None
    text = events.ical(plan.after, plan.stored)
    if asked.action == "create":
        found.save_event(text)
        done = "Created"
    else:
        found.data = text
        found.save()
        done = "Updated"
    event = plan.after
    return f"{done} in {plan.calendar}: {events.when(event, zone)} {event.title} (id {event.uid})."


async def _off_loop(work: Callable[[], T]) -> T:
    try:
        return await asyncio.wait_for(asyncio.to_thread(work), CALL_SECONDS)
    except TimeoutError:
        raise CalendarUnreachable(
            f"the CalDAV server did not finish within {CALL_SECONDS} s"
        ) from None


async def preview(arguments: Any, ctx: RunContext) -> dict[str, Any] | str:
    """The event as it will be, read from the server; a line instead when it cannot be."""
    settings = calendar_settings(ctx.config)
    if isinstance(settings, str):
        return f"calendar is not configured: {settings}"
    zone = events.zone_of(ctx.config.zone)
    try:
        asked = _asked(dict(arguments), zone)
        plan = await _off_loop(
            lambda: server.session(
                settings, lambda p: _plan(p, asked, settings.default_calendar)[0]
            )
        )
    except (CalendarUnreachable, EventNotFound, EventError) as exc:
        return str(exc)
    return _shown(plan, zone)


async def act(
    ctx: RunContext,
    settings: CalendarSettings,
    action: str,
    query: str | None,
    arguments: dict[str, Any],
) -> ToolResult:
    """One call; every failure comes back as an error result."""
    calendar, start, end = arguments["calendar"], arguments["start"], arguments["end"]
    try:
        zone = events.zone_of(ctx.config.zone)
        if action == "calendars":
            found = await _off_loop(lambda: server.session(settings, server.names))
            return ToolResult.ok(_calendars(found, settings.default_calendar))
        if action in WRITES:
            asked = _asked({"action": action, **arguments}, zone)
            default = settings.default_calendar
            done = await _off_loop(
                lambda: server.session(settings, lambda p: _write(p, asked, default, zone))
            )
            return ToolResult.ok(done)
        return await _read(ctx, settings, action, zone, query, calendar, start, end)
    except (CalendarUnreachable, EventNotFound, EventError) as exc:
        return ToolResult.error(str(exc))


async def _read(
    ctx: RunContext,
    settings: CalendarSettings,
    action: str,
    zone: Any,
    query: str | None,
    calendar: str | None,
    start: str | None,
    end: str | None,
) -> ToolResult:
    """`list` and `search`: the range's events, repeats expanded, matching the query."""
    if action == "search" and not query:
        return ToolResult.error("search needs a query")
    days = LIST_DAYS if action == "list" else SEARCH_DAYS
    if action == "search" and not start:
        start = (datetime.now(zone).date() - timedelta(days=SEARCH_DAYS_BACK)).isoformat()
    since, until = events.window(start, end, zone, days)
    wanted = calendar or settings.default_calendar
    name, items = await _off_loop(
        lambda: server.session(settings, lambda p: server.between(p, wanted, since, until))
    )
    found = [event for item in items for event in events.occurrences(item, since, until)]
    if query:
        found = _matching(found, query)
    return _listing(found, name, since, until, zone, _owners(settings, ctx.config))


def _calendars(found: list[str], default: str | None) -> str:
    if not found:
        return "The account has no calendar yet."
    usual = default if default in found else found[0]
    return "Calendars:\n" + "\n".join(
        f"- {name}" + (" (the default)" if name == usual else "") for name in found
    )


def _matching(found: list[Event], query: str) -> list[Event]:
    """Events whose title, place or text hold every word; a repeating one once, at its first
    occurrence in the range."""
    words = query.casefold().split()
    seen: set[str] = set()
    kept = []
    for event in sorted(found, key=events.sort_key):
        text = f"{event.title} {event.location} {event.description}".casefold()
        if all(word in text for word in words) and event.uid not in seen:
            seen.add(event.uid)
            kept.append(event)
    return kept


def _listing(
    found: list[Event],
    calendar: str,
    since: datetime,
    until: datetime,
    zone: Any,
    owners: frozenset[str],
) -> ToolResult:
    found = sorted(found, key=events.sort_key)
    span = f"from {since.strftime('%Y-%m-%d %H:%M')} to {until.strftime('%Y-%m-%d %H:%M')}"
    if not found:
        return ToolResult.ok(f"No events in {calendar} {span} ({events.zone_name(zone)}).")
    shown = found[:SHOWN_MAX]
    count = f"{len(found)} event" + ("" if len(found) == 1 else "s")
    head = f"{count} in {calendar} {span} (times in {events.zone_name(zone)})"
    if len(shown) < len(found):
        head += f"; the first {len(shown)} shown: narrow the range for the rest"
    lines = [head + ":", *(events.line(event, zone, owners) for event in shown)]
    source = relayed_source(NAME, events.outsiders(shown, owners))
    return ToolResult.ok("\n".join(lines), source=source)


async def probe(settings: CalendarSettings | str) -> str:
    """For `augure doctor` and `augure init`: the server's calendars, or `CalendarUnreachable` with
    the line saying why they cannot be read."""
    if isinstance(settings, str):
        raise CalendarUnreachable(settings)
    found = await _off_loop(lambda: server.session(settings, server.names))
    where = without_login(settings.url or "")
    return f"{where}: {len(found)} calendar(s): {', '.join(found) or 'none'}"
