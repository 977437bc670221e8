"""The `calendar` tool over CalDAV (docs/calendar.md): `tool` declares it, `settings`
its `[tools.calendar]` table; at its first call (docs/performance.md) `actions` runs it,
`events` reads, shows and builds events (icalendar, recurring-ical-events), `server` makes the
round trips (caldav, imported on first use)."""

from augure.tools.calendar.settings import CalendarSettings, calendar_settings
from augure.tools.calendar.tool import calendar_tool

__all__ = ["CalendarSettings", "calendar_settings", "calendar_tool"]
