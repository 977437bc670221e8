"""Events as data: read from iCalendar text (recurrences expanded in a range), shown as one
line each in the owner's zone and the event's own, and built for a create or an update.

Pure functions over icalendar and recurring-ical-events: the CalDAV round trips are in
`server.py`, the tool's actions in `tool.py`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from augure.common.errors import NotDone

DESCRIPTION_SHOWN = 300  # characters of a description on an event's line
# An ISO date-time may name its zone the way RFC 9557 does: 2026-03-27T10:00[America/New_York].
ZONED = re.compile(r"^(?P<when>[^\[\]]+)\[(?P<zone>[A-Za-z0-9_+/-]+)\]$")
# What of an organiser's address may stand in a result's source (it is outside text).
ADDRESS_CHARACTERS = re.compile(r"[^\w@.+-]")


class EventError(NotDone, ValueError):  # ValueError: raised in pydantic validators
    """An argument or an event that cannot be used; the message says which and why."""


def zone_of(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise EventError(f"unknown time zone {name!r}; use an IANA name") from None


def parse_when(text: str, zone: ZoneInfo) -> date | datetime:
    """A date, or an aware date-time: one written without an offset or zone is in `zone`
    (the owner's)."""
    text = text.strip()
    named = ZONED.match(text)
    if named:
        text, zone = named["when"], zone_of(named["zone"])
    try:
        if "T" not in text and " " not in text:
            return date.fromisoformat(text)
        when = datetime.fromisoformat(text)
    except ValueError:
        raise EventError(f"{text!r} is not an ISO date (2026-03-27) or date-time") from None
    if named and when.tzinfo is not None:
        raise EventError(f"{text!r}: give an offset or a [zone], not both")
    return when.replace(tzinfo=zone) if when.tzinfo is None else when


def day_start(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(), tzinfo=zone)


def window(
    start: str | None, end: str | None, zone: ZoneInfo, days: int
) -> tuple[datetime, datetime]:
    """The asked range: from `start` (default: today) to `end`, a date counting whole (default:
    `days` whole days from the start's day)."""
    first = parse_when(start, zone) if start else datetime.now(zone).date()
    since = first if isinstance(first, datetime) else day_start(first, zone)
    if end:
        last = parse_when(end, zone)
        until = last if isinstance(last, datetime) else day_start(last + timedelta(days=1), zone)
    else:
        until = day_start(since.astimezone(zone).date() + timedelta(days=days), zone)
    if until <= since:
        raise EventError("end must come after start")
    return since, until


@dataclass(frozen=True)
class Event:
    """One event, or one occurrence of a repeating one."""

    uid: str
    title: str
    start: date | datetime
    end: date | datetime
    location: str = ""
    description: str = ""
    recurrence: str = ""  # the RRULE, as iCalendar writes it
    organiser: str | None = None  # the address, when someone organised it

    @property
    def all_day(self) -> bool:
        return not isinstance(self.start, datetime)


def _text(component: Any, name: str) -> str:
    value = component.get(name)
    return str(value) if value is not None else ""


def _organiser(component: Any) -> str | None:
    value = _text(component, "ORGANIZER")
    return re.sub(r"^mailto:", "", value, flags=re.IGNORECASE).strip().lower() or None


def _event(component: Any) -> Event:
    start = component.decoded("DTSTART")
    if "DTEND" in component:
        end = component.decoded("DTEND")
    elif "DURATION" in component:
        end = start + component.decoded("DURATION")
    else:
        end = start if isinstance(start, datetime) else start + timedelta(days=1)
    rule = component.get("RRULE")
    return Event(
        uid=_text(component, "UID"),
        title=_text(component, "SUMMARY") or "(no title)",
        start=start,
        end=end,
        location=_text(component, "LOCATION"),
        description=_text(component, "DESCRIPTION"),
        recurrence=rule.to_ical().decode() if rule is not None else "",
        organiser=_organiser(component),
    )


def parsed(ical: str) -> Any:
    from icalendar import Calendar

    try:
        return Calendar.from_ical(ical)
    except ValueError as exc:
        raise EventError(f"the server sent an event that cannot be read: {exc}") from None


def master(ical: str) -> Event:
    """The event as stored (a repeating one as its first occurrence and its rule)."""
    events = [c for c in parsed(ical).walk("VEVENT") if "RECURRENCE-ID" not in c]
    if not events:
        raise EventError("the stored object holds no event")
    return _event(events[0])


def occurrences(ical: str, since: datetime, until: datetime) -> list[Event]:
    """Every occurrence in the range, a repeating event expanded, each with its rule."""
    import recurring_ical_events

    calendar = parsed(ical)
    rules = {_text(c, "UID"): c.get("RRULE") for c in calendar.walk("VEVENT") if c.get("RRULE")}
    found = []
    for component in recurring_ical_events.of(calendar).between(since, until):
        event = _event(component)
        rule = rules.get(event.uid)
        found.append(replace(event, recurrence=rule.to_ical().decode()) if rule else event)
    return found


def sort_key(event: Event) -> datetime:
    start = event.start
    if isinstance(start, datetime):
        return start if start.tzinfo else start.replace(tzinfo=UTC)
    return datetime.combine(start, time(), tzinfo=UTC)


def zone_name(zone: tzinfo | None) -> str:
    return str(getattr(zone, "key", None) or getattr(zone, "zone", None) or zone or "floating")


def when(event: Event, owner: ZoneInfo) -> str:
    """Its dates (all day), or its times in the owner's zone and, when another, its own."""
    if not isinstance(event.start, datetime) or not isinstance(event.end, datetime):
        last = event.end - timedelta(days=1) if event.end > event.start else event.start
        return (
            f"{event.start} all day" if last == event.start else f"{event.start} to {last} all day"
        )
    own = event.start.tzinfo
    start = event.start if own else event.start.replace(tzinfo=owner)  # floating: the owner's
    end = event.end if event.end.tzinfo else event.end.replace(tzinfo=owner)
    shown = _span(start.astimezone(owner), end.astimezone(owner), zone_name(owner))
    if own is None or zone_name(own) == zone_name(owner):
        return shown
    return f"{shown} ({_span(start, end, zone_name(own))}, the event's zone)"


def _span(start: datetime, end: datetime, label: str) -> str:
    until = end.strftime("%H:%M") if end.date() == start.date() else end.strftime("%Y-%m-%d %H:%M")
    return f"{start.strftime('%Y-%m-%d %H:%M')}–{until} {label}"


def line(event: Event, owner: ZoneInfo, owners: frozenset[str]) -> str:
    parts = [when(event, owner), event.title]
    if event.location:
        parts.append(f"at {event.location}")
    if event.recurrence:
        parts.append(f"repeats {event.recurrence}")
    if event.organiser and event.organiser not in owners:
        parts.append(f"organised by {event.organiser}")
    if event.description:
        text = " ".join(event.description.split())
        cut = "…" if len(text) > DESCRIPTION_SHOWN else ""
        parts.append(f"description: {text[:DESCRIPTION_SHOWN]}{cut}")
    parts.append(f"id {event.uid}")
    return "- " + " | ".join(parts)


def outsiders(events: list[Event], owners: frozenset[str]) -> set[str]:
    """The organisers, other than the owner, of these events: the sources of outside text."""
    return {
        ADDRESS_CHARACTERS.sub("", e.organiser)[:80] or "someone"
        for e in events
        if e.organiser and e.organiser not in owners
    }


def rule_checked(text: str | None) -> str | None:
    """An RRULE as iCalendar reads it (a leading `RRULE:` allowed), or None to leave it."""
    if text is None:
        return None
    rule = re.sub(r"^RRULE:", "", text.strip(), flags=re.IGNORECASE)
    if not rule:
        return ""
    if re.search(r"[\r\n]", rule):
        raise ValueError("must be one line")
    from icalendar import vRecur

    try:
        parsed_rule = vRecur.from_ical(rule)
    except ValueError:
        raise ValueError(f"{rule!r} is not an RRULE (e.g. FREQ=WEEKLY;BYDAY=MO)") from None
    if "FREQ" not in parsed_rule:
        raise ValueError(f"{rule!r} names no FREQ")
    return str(parsed_rule.to_ical().decode())


def changed(
    base: Event | None,
    *,
    title: str | None,
    start: date | datetime | None,
    end: date | datetime | None,
    all_day: bool | None,
    location: str | None,
    description: str | None,
    recurrence: str | None,
) -> Event:
    """The event as it will be: `base` (None for a new one) with what the call sets."""
    if base is None:
        if not title or start is None:
            raise EventError("create needs a title and a start")
        base = Event(uid=f"{uuid.uuid4()}@augure", title=title, start=start, end=start)
        duration: timedelta = timedelta(hours=1) if isinstance(start, datetime) else timedelta(1)
    else:
        duration = _length(base)
    first = start if start is not None else base.start
    day = all_day if all_day is not None else (base.all_day if start is None else None)
    if day is True and isinstance(first, datetime):
        first = first.date()
    elif day is False and not isinstance(first, datetime):
        raise EventError("a timed event needs a start with a time (2026-03-27T10:00)")
    if not isinstance(first, datetime) and isinstance(base.start, datetime):
        duration = timedelta(days=1)
    elif isinstance(first, datetime) and not isinstance(base.start, datetime):
        duration = timedelta(hours=1)
    last = end if end is not None else first + duration
    if not isinstance(first, datetime) and isinstance(last, datetime):
        last = last.date()
    if isinstance(first, datetime) != isinstance(last, datetime):
        raise EventError("give start and end both as dates or both as date-times")
    if not isinstance(first, datetime) and end is not None:
        last = last + timedelta(days=1)  # the last day given counts whole (DTEND is after it)
    if last <= first:
        raise EventError("end must come after start")
    return replace(
        base,
        title=title if title is not None else base.title,
        start=first,
        end=last,
        location=location if location is not None else base.location,
        description=description if description is not None else base.description,
        recurrence=recurrence if recurrence is not None else base.recurrence,
    )


def _length(event: Event) -> timedelta:
    start, end = event.start, event.end
    if isinstance(start, datetime) and isinstance(end, datetime):
        return end - start
    if not isinstance(start, datetime) and not isinstance(end, datetime):
        return end - start
    return timedelta(hours=1) if isinstance(start, datetime) else timedelta(days=1)


def shown(event: Event, owner: ZoneInfo) -> dict[str, Any]:
    """What an approval request shows of an event."""

    def stamp(value: date | datetime) -> str:
        if isinstance(value, datetime):
            return f"{value.strftime('%Y-%m-%d %H:%M')} {zone_name(value.tzinfo)}"
        return value.isoformat()

    last = event.end - timedelta(days=1) if event.all_day else event.end
    return {
        "title": event.title,
        "start": stamp(event.start),
        "end": stamp(last),
        "all_day": event.all_day,
        "when, for you": when(event, owner),
        "location": event.location,
        "repeats": event.recurrence or "no",
        "description": event.description,
    }


def ical(event: Event, stored: str | None = None) -> str:
    """The iCalendar text to store: a new calendar, or the stored one with its event changed
    (what the call does not set, such as attendees and alarms, is kept)."""
    from icalendar import Calendar, vRecur
    from icalendar import Event as Component

    if stored is None:
        calendar = Calendar()
        calendar.add("prodid", "-//Augure//calendar//EN")
        calendar.add("version", "2.0")
        component = Component()
        component.add("uid", event.uid)
        calendar.add_component(component)
    else:
        calendar = parsed(stored)
        component = next(c for c in calendar.walk("VEVENT") if "RECURRENCE-ID" not in c)
        # Moved occurrences belong to the old times: the changed series starts afresh.
        calendar.subcomponents[:] = [
            c for c in calendar.subcomponents if c.name != "VEVENT" or c is component
        ]
    for name in ("DTSTAMP", "SUMMARY", "DTSTART", "DTEND", "DURATION", "LOCATION"):
        component.pop(name, None)
    for name in ("DESCRIPTION", "RRULE"):
        component.pop(name, None)
    component.add("dtstamp", datetime.now(UTC))
    component.add("summary", event.title)
    component.add("dtstart", event.start)
    component.add("dtend", event.end)
    if event.location:
        component.add("location", event.location)
    if event.description:
        component.add("description", event.description)
    if event.recurrence:
        component.add("rrule", vRecur.from_ical(event.recurrence))
    if stored is not None:
        component["SEQUENCE"] = int(component.get("SEQUENCE", 0)) + 1
    calendar.add_missing_timezones()
    return str(calendar.to_ical().decode())
