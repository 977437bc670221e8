"""A 5-field crontab expression read as crontab(5) reads it (docs/jobs.md), turned into
APScheduler triggers that do the fire-time arithmetic in the job's zone.

APScheduler's own crontab reading numbers weekdays from Monday = 0 and joins day of month
and day of week with AND; each field is therefore expanded here to the set of values cron
means, and handed to APScheduler as an explicit list."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

from augure.common.errors import NotDone

MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# In cron's order (sun = 0). APScheduler knows the same names, and a name cannot be misread
# the way its numbers (Monday = 0) are.
DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


class CrontabError(NotDone):
    """An expression cron would not accept; the message names the field."""


@dataclass(frozen=True)
class Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    first_name_value: int = 0


FIELDS = (
    Field("minute", 0, 59),
    Field("hour", 0, 23),
    Field("day of month", 1, 31),
    Field("month", 1, 12, MONTH_NAMES, 1),
    Field("day of week", 0, 7, DAY_NAMES, 0),  # 7 is Sunday as well as 0
)


@dataclass(frozen=True)
class Crontab:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday .. 6 = Saturday
    # Vixie cron's rule: a day field whose text starts with `*` is unrestricted, and only
    # when both day fields are restricted does a day matching either one fire.
    days_or_weekdays: bool


def parse(expression: str) -> Crontab:
    texts = expression.split()
    if len(texts) != 5:
        raise CrontabError("cron must have 5 fields (minute hour day month weekday)")
    minutes, hours, days, months, weekdays = (
        _values(text, field) for text, field in zip(texts, FIELDS, strict=True)
    )
    days_or_weekdays = not texts[2].startswith("*") and not texts[4].startswith("*")
    longest = max(_longest_month(month) for month in months)
    if not days_or_weekdays and min(days) > longest:
        raise CrontabError(f"day of month: {texts[2]} never falls in the months given")
    return Crontab(
        frozenset(minutes),
        frozenset(hours),
        frozenset(days),
        frozenset(months),
        frozenset(day % 7 for day in weekdays),
        days_or_weekdays,
    )


def trigger(expression: str, zone: ZoneInfo) -> BaseTrigger:
    """Fire times of `expression` in `zone`; daylight-saving changes follow the zone."""
    crontab = parse(expression)
    common = {
        "minute": _listed(crontab.minutes, FIELDS[0]),
        "hour": _listed(crontab.hours, FIELDS[1]),
        "month": _listed(crontab.months, FIELDS[3]),
        "timezone": zone,
    }
    days = _listed(crontab.days, FIELDS[2])
    weekdays = "*" if len(crontab.weekdays) == 7 else _weekday_names(crontab.weekdays)
    if crontab.days_or_weekdays:
        return OrTrigger(
            [CronTrigger(day=days, **common), CronTrigger(day_of_week=weekdays, **common)]
        )
    return CronTrigger(day=days, day_of_week=weekdays, **common)


def _values(text: str, field: Field) -> set[int]:
    values: set[int] = set()
    for item in text.lower().split(","):
        span, slash, step_text = item.partition("/")
        step = _number(step_text, Field(field.name, 0, 0), "step") if slash else 1
        if step < 1:
            raise CrontabError(f"{field.name}: the step in {item!r} must be at least 1")
        if span == "*":
            first, last = field.low, field.high
        elif "-" in span:
            first_text, _, last_text = span.partition("-")
            first, last = _value(first_text, field), _value(last_text, field)
            if first > last:
                raise CrontabError(f"{field.name}: the range {span!r} runs backwards")
        else:
            # `5/10` reads as 5 to the field's last value, every 10 (as cronie and the
            # APScheduler reading of earlier versions do), so stored jobs keep their meaning.
            first = _value(span, field)
            last = field.high if slash else first
        values.update(range(first, last + 1, step))
    return values


def _value(text: str, field: Field) -> int:
    if text in field.names:
        return field.names.index(text) + field.first_name_value
    number = _number(text, field, "value")
    if not field.low <= number <= field.high:
        raise CrontabError(f"{field.name}: {number} is outside {field.low}-{field.high}")
    return number


def _number(text: str, field: Field, what: str) -> int:
    if not text.isascii() or not text.isdigit():
        expected = f"a number or a name such as {field.names[1]}" if field.names else "a number"
        raise CrontabError(
            f"{field.name}: {what} {text!r} is not {expected} "
            "(allowed: *, a-b ranges, a,b lists, /n steps)"
        )
    return int(text)


def _listed(values: frozenset[int], field: Field) -> str:
    if len(values) == field.high - field.low + 1:
        return "*"
    return ",".join(str(value) for value in sorted(values))


def _weekday_names(weekdays: frozenset[int]) -> str:
    return ",".join(DAY_NAMES[day] for day in sorted(weekdays))


def _longest_month(month: int) -> int:
    return calendar.monthrange(2000, month)[1]  # a leap year: 29 February exists
