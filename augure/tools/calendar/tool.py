"""`calendar`: the owner's calendar on any CalDAV server (docs/calendar.md).

Reads (`calendars`, `list`, `search`) change nothing and ask nothing. An event someone else
organised is outside content: a result showing one is marked with its organisers as the
source, as a mail is with its sender. `create`, `update` and `delete` change the owner's
calendar, so they ask, and the request shows the event as it will be (or as it was, for a
delete), read from the server; the press runs only if that is still what would happen.

This module declares it; what runs it (`actions`, the events and the CalDAV round trips)
loads at its first call (docs/performance.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from augure.config.settings import Config
from augure.tools.arguments import OneLine
from augure.tools.base import Egress, RunContext, ToolResult, tool
from augure.tools.calendar.settings import (
    CALL_SECONDS,
    NAME,
    WRITES,
    calendar_settings,
    missing_settings,
)

CalendarAction = Literal["list", "search", "create", "update", "delete", "calendars"]


def _rule(value: str | None) -> str | None:
    # icalendar's recurrence rules load at the first call (docs/performance.md).
    from augure.tools.calendar import events

    return events.rule_checked(value)


def _classify(arguments: Any, config: Config) -> Egress:
    return Egress.WRITE if arguments.action in WRITES else Egress.READ_ONLY


def _target(arguments: Any) -> str:
    where = arguments.calendar or "default"
    event = f"/{arguments.event_id}" if arguments.action in ("update", "delete") else ""
    return f"calendar:{arguments.action}:{where}{event}"


async def _preview(arguments: Any, ctx: RunContext) -> dict[str, Any] | str:
    from augure.tools.calendar import actions  # loaded at the first call (docs/performance.md)

    return await actions.preview(arguments, ctx)


@tool(
    NAME,
    egress=Egress.READ_ONLY,
    classify=_classify,
    target=_target,
    preview=_preview,
    check=missing_settings,
    timeout=CALL_SECONDS + 10,
    # Its results carry outside content only when they show an event someone else organised:
    # the tool marks those itself, naming the organisers (relays: kept marked in history).
    relays=True,
    offers="message",
    # Most turns never touch the calendar: its schema is sent once asked for (load_tools).
    deferred=True,
)
async def calendar_tool(
    ctx: RunContext,
    action: Annotated[CalendarAction, Field(description="what to do")],
    calendar: Annotated[OneLine, Field(description="calendar name; default the usual one")] = None,
    start: Annotated[
        OneLine, Field(description="ISO date or date-time; no offset = the owner's zone")
    ] = None,
    end: Annotated[OneLine, Field(description="ISO date (counted whole) or date-time")] = None,
    query: Annotated[OneLine, Field(description="search: words in title, place or text")] = None,
    title: OneLine = None,
    description: str | None = None,
    location: OneLine = None,
    event_id: Annotated[
        OneLine, Field(max_length=500, description="update/delete: the id list shows")
    ] = None,
    all_day: bool | None = None,
    recurrence: Annotated[
        str | None, AfterValidator(_rule), Field(description="an RRULE, e.g. FREQ=WEEKLY")
    ] = None,
) -> ToolResult:
    """Calendar events. List them (default today and the next 7 days), search, create, update
    or delete one (these ask first), or list the owner's calendars on their CalDAV server."""
    settings = calendar_settings(ctx.config)
    if isinstance(settings, str):
        return ToolResult.error(f"calendar is not configured: {settings}")
    arguments = {
        "calendar": calendar,
        "event_id": event_id,
        "title": title,
        "start": start,
        "end": end,
        "all_day": all_day,
        "location": location,
        "description": description,
        "recurrence": recurrence,
    }
    from augure.tools.calendar import actions  # loaded at the first call (docs/performance.md)

    return await actions.act(ctx, settings, action, query, arguments)
