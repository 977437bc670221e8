"""The CalDAV round trips, through the caldav library (imported on first use).

caldav blocks, so every function here runs in a worker thread (`tool.py` awaits it with
`asyncio.to_thread` and a timeout) on a connection of its own. Whatever goes wrong becomes one
`CalendarUnreachable` line naming the server and what to check: no traceback, no password.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from augure.common.errors import NotDone, Unavailable
from augure.common.links import without_login
from augure.tools.calendar.settings import NETWORK_TIMEOUT

if TYPE_CHECKING:
    from augure.tools.calendar.settings import CalendarSettings

T = TypeVar("T")


class CalendarUnreachable(Unavailable):
    """The server is down, refuses the login or answers with an error: one line for the owner."""


class EventNotFound(NotDone):
    """No such calendar or event; the message says what there is."""


@dataclass(frozen=True)
class Stored:
    """An event as the server holds it: its calendar and its iCalendar text."""

    calendar: str
    ical: str


def session(settings: CalendarSettings, work: Callable[[Any], T]) -> T:
    """Run `work(principal)` on a new connection; every failure as one `CalendarUnreachable`
    line."""
    import caldav
    import requests
    from caldav.lib import error

    where = without_login(settings.url or "")
    password = settings.password.get_secret_value() if settings.password else None
    try:
        with caldav.DAVClient(
            settings.url or "",
            username=settings.username,
            password=password,
            timeout=NETWORK_TIMEOUT,
        ) as client:
            principal: Any = client.principal()  # type: ignore[no-untyped-call]
            return work(principal)
    except (EventNotFound, CalendarUnreachable):
        raise
    except error.AuthorizationError:
        raise CalendarUnreachable(
            f"the CalDAV server at {where} refused the login of {settings.username!r}: "
            "check [tools.calendar] username and password"
        ) from None
    except requests.Timeout:
        raise CalendarUnreachable(
            f"the CalDAV server at {where} did not answer within {NETWORK_TIMEOUT} s"
        ) from None
    except requests.ConnectionError:
        raise CalendarUnreachable(
            f"cannot reach the CalDAV server at {where}: check [tools.calendar] url"
        ) from None
    except (error.DAVError, requests.RequestException) as exc:
        reason = getattr(exc, "reason", None) or type(exc).__name__
        raise CalendarUnreachable(
            f"the CalDAV server at {where} answered with an error ({reason})"
        ) from None
    except Exception as exc:  # the library's own failure: its name, never its arguments
        raise CalendarUnreachable(
            f"talking to the CalDAV server at {where} failed ({type(exc).__name__})"
        ) from None


def names(principal: Any) -> list[str]:
    return [name_of(found) for found in principal.calendars()]


def name_of(found: Any) -> str:
    """A calendar's display name, else the last part of its address."""
    return str(found.get_display_name() or str(found.url).rstrip("/").rsplit("/", 1)[-1])


def chosen(principal: Any, wanted: str | None) -> Any:
    """The calendar named `wanted`, or the first one."""
    calendars = principal.calendars()
    if not calendars:
        raise EventNotFound("the account has no calendar yet: make one in the server's web page")
    if wanted is None:
        return calendars[0]
    for found in calendars:
        if name_of(found) == wanted:
            return found
    known = ", ".join(name_of(found) for found in calendars)
    raise EventNotFound(f"no calendar named {wanted!r}; the calendars are: {known}")


def between(
    principal: Any, wanted: str | None, since: datetime, until: datetime
) -> tuple[str, list[str]]:
    """The calendar's name and the iCalendar text of each of its events that meets the range:
    the server filters by time, the repeats are expanded here (`events.occurrences`)."""
    found = chosen(principal, wanted)
    objects: list[Any] = found.search(start=since, end=until, event=True, expand=False)
    return name_of(found), [str(item.data) for item in objects]


def by_uid(principal: Any, wanted: str | None, uid: str) -> tuple[Stored, Any]:
    from caldav.lib import error

    found = chosen(principal, wanted)
    try:
        item = found.event_by_uid(uid)
    except error.NotFoundError:
        raise EventNotFound(f"no event with id {uid!r} in {name_of(found)}") from None
    return Stored(name_of(found), str(item.data)), item


def save(principal: Any, wanted: str | None, ical: str) -> str:
    found = chosen(principal, wanted)
    found.save_event(ical)
    return name_of(found)
