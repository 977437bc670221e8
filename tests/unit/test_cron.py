"""Cron expressions fire when every crontab says they do (docs/jobs.md): day of week 0 and 7
are Sunday, names are allowed, and day of month with day of week is OR when both are
restricted (Vixie cron's rule: a field starting with `*` is unrestricted).

The product's fire times are compared with a brute-force reference written here from the
plain definition of each field, over a year of minutes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from augure.common.ports import NOT_KNOWN, Sources
from augure.scheduler.jobs import Job, JobError, next_fire
from augure.scheduler.runner import Scheduler
from augure.skills.model import SkillError, parse_skill_md
from augure.store.state import Store
from tests.e2e.helpers import augure, environment

DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


# -- the reference: each field by its definition in crontab(5) ------------------------------


def reference_values(field: str, low: int, high: int, names: list[str], first: int) -> set[int]:
    def number(text: str) -> int:
        return names.index(text) + first if text in names else int(text)

    values: set[int] = set()
    for part in field.lower().split(","):
        span, _, step = part.partition("/")
        if span == "*":
            start, end = low, high
        elif "-" in span:
            start, end = (number(side) for side in span.split("-"))
        else:  # `5/10`: from 5 to the field's last value (as cronie and APScheduler read it)
            start = number(span)
            end = high if step else start
        values |= set(range(start, end + 1, int(step or 1)))
    return values


def reference_fires(expression: str, start: date, end: date) -> list[datetime]:
    """Every minute in [start, end) the expression matches, tried one by one (UTC)."""
    minute, hour, dom, month, dow = expression.split()
    minutes = reference_values(minute, 0, 59, [], 0)
    hours = reference_values(hour, 0, 23, [], 0)
    days = reference_values(dom, 1, 31, [], 1)
    months = reference_values(month, 1, 12, MONTHS, 1)
    weekdays = {d % 7 for d in reference_values(dow, 0, 7, DAYS, 0)}  # 7 is Sunday too
    both_restricted = not dom.startswith("*") and not dow.startswith("*")
    fires = []
    day = start
    while day < end:
        dom_ok = day.day in days
        dow_ok = day.isoweekday() % 7 in weekdays  # isoweekday: Monday 1 .. Sunday 7
        day_ok = (dom_ok or dow_ok) if both_restricted else (dom_ok and dow_ok)
        if day.month in months and day_ok:
            for minute_of_day in range(24 * 60):
                h, m = divmod(minute_of_day, 60)
                if h in hours and m in minutes:
                    fires.append(datetime(day.year, day.month, day.day, h, m, tzinfo=UTC))
        day += timedelta(days=1)
    return fires


# -- the product ----------------------------------------------------------------------------


def job(expression: str, zone: str = "UTC", next_run: str | None = None) -> Job:
    return Job("j", expression, None, zone, "p", "1", next_run, None, None)


def product_fires(expression: str, start: date, end: date) -> list[datetime]:
    """The sequence the scheduler walks: each next run strictly after the previous one."""
    fires = []
    now = datetime(start.year, start.month, start.day, tzinfo=UTC) - timedelta(microseconds=1)
    limit = datetime(end.year, end.month, end.day, tzinfo=UTC)
    while (upcoming := next_fire(job(expression), now)) is not None:
        now = datetime.fromisoformat(upcoming)
        if now >= limit:
            break
        fires.append(now)
    return fires


EXPRESSIONS = [
    "0 8 * * 1-5",  # the README's "every weekday at 8"
    "0 8 * * 1",
    "0 8 * * 0",
    "0 8 * * 7",
    "0 8 * * sun",
    "0 8 * * SUN",
    "0 8 * * mon-fri",
    "0 8 * * Mon-Fri",
    "0 8 * * sat,SUN",
    "0 8 * * 6,0",
    "0 8 * * 5-7",
    "0 8 * * 0-7",
    "0 8 * * */2",
    "0 6 * * tue,thu",
    "5 4 * * sun",
    "0 8 1 * 1",  # the 1st of the month, and every Monday
    "0 12 13 * 5",
    "0 12 1-7 * mon",
    "0 8 15 * 0",
    "0 8 30 2 mon",  # no 30 February, so Mondays of February only
    "0 8 */2 * 1",  # `*/2` starts with `*`: unrestricted for the OR rule, so AND
    "0 12 1 * */2",
    "30 6 1,15 * *",
    "15 14 1 * *",
    "0 0 31 * *",
    "45 23 28-31 * *",
    "0 4 8-14 * *",
    "0 12 */10 * *",
    "0 9 5/10 * *",
    "0 0 29 2 *",  # 29 February 2028 is in the span
    "0 9 * JAN,jul *",
    "0 9 1 jan-Mar *",
    "0 0,12 1 */2 *",
    "*/15 * * * *",
    "23 0-20/2 * * *",
    "1-5/2 3 * * 3",
    "0 22 * * 1-5",
]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_fires_as_crontab_means_over_a_year(expression: str) -> None:
    start, end = date(2027, 7, 1), date(2028, 7, 1)
    expected = reference_fires(expression, start, end)
    assert expected, "the span should hold at least one fire"
    assert product_fires(expression, start, end) == expected


def test_29_february_fires_only_in_leap_years() -> None:
    start, end = date(2026, 1, 1), date(2037, 1, 1)
    fires = product_fires("0 0 29 2 *", start, end)
    assert fires == reference_fires("0 0 29 2 *", start, end)
    assert [fire.year for fire in fires] == [2028, 2032, 2036]


@pytest.mark.parametrize(
    ("expression", "field"),
    [
        ("60 * * * *", "minute"),
        ("*/0 * * * *", "minute"),
        ("0 24 * * *", "hour"),
        ("0 8-6 * * *", "hour"),
        ("0 8 0 * *", "day of month"),
        ("0 8 32 * *", "day of month"),
        ("0 8 last * *", "day of month"),
        ("0 8 ? * *", "day of month"),
        ("0 8 15W * *", "day of month"),
        ("0 8 30 2 *", "day of month"),  # never: no 30 February
        ("0 8 * 13 *", "month"),
        ("0 8 * foo *", "month"),
        ("0 8 * * 8", "day of week"),
        ("0 8 * * fri-mon", "day of week"),
        ("0 8 * * mon#1", "day of week"),
        ("0 8 * * 5L", "day of week"),
        ("0 8 * * monday", "day of week"),
        ("0 8 * * 1,,2", "day of week"),
        ("0 8 * * -1", "day of week"),
    ],
)
def test_a_bad_expression_is_refused_in_one_line_naming_the_field(
    expression: str, field: str
) -> None:
    with pytest.raises(JobError) as refused:
        next_fire(job(expression), datetime(2027, 1, 1, tzinfo=UTC))
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"invalid cron {expression!r}: {field}:"), message


# -- the ways in: the schedule tool and `augure jobs add` (Scheduler.create), skills --------


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "state.db")
    yield opened
    await opened.close()


class Owner:
    def __init__(self) -> None:
        self.told: list[str] = []
        self.turns: list[str] = []

    async def run_turn(self, conversation: str, prompt: str, *_: tuple[str, ...]) -> str:
        self.turns.append(prompt)
        return "done"

    async def send(self, chat_id: str, text: str, sources: Sources = NOT_KNOWN) -> None:
        self.told.append(text)


def scheduler(store: Store, now: datetime, owner: Owner) -> Scheduler:
    return Scheduler(
        store=store,
        run_turn=owner.run_turn,
        default_zone="Europe/Paris",
        misfire_grace_seconds=60,
        owner_chat="1001",
        clock=lambda: now,
        notifier=owner,
    )


async def test_every_weekday_at_8_starts_on_monday_in_the_jobs_zone(store: Store) -> None:
    saturday = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)
    made = scheduler(store, saturday, Owner())
    created = await made.create(prompt="brief", chat_id="1", cron="0 8 * * 1-5", job_id="brief")
    assert created.next_run is not None
    first = datetime.fromisoformat(created.next_run).astimezone(ZoneInfo("Europe/Paris"))
    assert (first.strftime("%A"), first.hour, first.minute) == ("Monday", 8, 0)
    assert first.date() == date(2026, 3, 30)  # the first Monday after the change to summer time


async def test_sunday_as_7_is_accepted_for_a_job(store: Store) -> None:
    made = scheduler(store, datetime(2026, 3, 25, 12, 0, tzinfo=UTC), Owner())
    created = await made.create(prompt="p", chat_id="1", cron="0 8 * * 7", timezone="UTC")
    assert created.next_run == "2026-03-29T08:00:00+00:00"  # Sunday


async def test_augure_jobs_add_reads_the_cron_as_crontab_does(tmp_path: Path) -> None:
    env = environment(tmp_path, {"AUGURE_ALLOWED_USERS": "1001"})
    code, _, err = await augure(
        "jobs", "add", "--cron", "0 8 * * 7", "--prompt", "p", "--id", "sunday",
        "--timezone", "Europe/Paris", env=env,
    )  # fmt: skip
    assert code == 0, err
    code, out, _ = await augure("jobs", "list", "--json", env=env)
    (listed,) = json.loads(out)
    first = datetime.fromisoformat(listed["next_run"]).astimezone(ZoneInfo("Europe/Paris"))
    assert (first.strftime("%A"), first.hour) == ("Sunday", 8)
    code, _, err = await augure(
        "jobs", "add", "--cron", "0 8 * * 8", "--prompt", "p", "--id", "bad", env=env
    )
    assert code == 1
    assert err == "augure: invalid cron '0 8 * * 8': day of week: 8 is outside 0-7\n"


def skill_md(schedule: str) -> str:
    return (
        "---\nname: weekly-review\ndescription: d\ntrigger: cron\n"
        f'schedule: "{schedule}"\ntimezone: Europe/Paris\n---\n\nReview the week.\n'
    )


async def test_a_skills_schedule_follows_crontab(store: Store) -> None:
    meta = parse_skill_md(skill_md("0 18 * * 7"), "weekly-review")
    assert meta.schedule == "0 18 * * 7"
    with pytest.raises(SkillError, match=r"SKILL.md: invalid cron '0 18 \* \* 8': day of week:"):
        parse_skill_md(skill_md("0 18 * * 8"), "weekly-review")
    made = scheduler(store, datetime(2026, 3, 25, 12, 0, tzinfo=UTC), Owner())
    scheduled = await made.schedule_skill(meta.name, "0 18 * * 7", "Europe/Paris")
    assert scheduled.next_run == "2026-03-29T16:00:00+00:00"  # Sunday 18:00 in Paris (CEST)


# -- jobs stored before: their text keeps its meaning, their next run is recomputed ---------


def store_next_run(path: Path, job_id: str, next_run: str | None) -> None:
    """As an older version left it in state.db."""
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE jobs SET next_run = ? WHERE id = ?", (next_run, job_id))
    connection.close()


async def test_a_next_run_stored_with_the_old_weekdays_is_recomputed_at_start(
    store: Store, tmp_path: Path
) -> None:
    wednesday = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
    owner = Owner()
    made = scheduler(store, wednesday, owner)
    await made.create(prompt="p", chat_id="1", cron="0 8 * * 1", timezone="UTC", job_id="monday")
    await made.create(prompt="p", chat_id="1", cron="0 8 * * *", timezone="UTC", job_id="daily")
    # Computed with Monday as 0: "1" meant Tuesday.
    store_next_run(tmp_path / "state.db", "monday", "2026-04-07T08:00:00+00:00")
    await made.start()
    await made.stop()
    monday = await made.get("monday")
    daily = await made.get("daily")
    assert monday is not None and monday.next_run == "2026-04-06T08:00:00+00:00"
    assert daily is not None and daily.next_run == "2026-04-02T08:00:00+00:00"
    assert owner.turns == [] and owner.told == []


async def test_a_run_missed_while_down_is_kept_by_the_recompute(
    store: Store, tmp_path: Path
) -> None:
    owner = Owner()
    created_on = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
    await scheduler(store, created_on, owner).create(
        prompt="daily", chat_id="1", cron="0 8 * * *", timezone="UTC", job_id="daily"
    )
    # The bot was down at 08:00 and starts 30 s later, within the misfire grace.
    made = scheduler(store, datetime(2026, 4, 2, 8, 0, 30, tzinfo=UTC), owner)
    await made.recover()
    kept = await made.get("daily")
    assert kept is not None and kept.next_run == "2026-04-02T08:00:00+00:00"
    tasks = await made.tick()
    for task in tasks:
        await task
    assert owner.turns == ["daily"]


async def test_a_stored_expression_no_longer_accepted_stops_and_the_owner_is_told(
    store: Store, tmp_path: Path
) -> None:
    owner = Owner()
    now = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
    made = scheduler(store, now, owner)
    await made.create(prompt="p", chat_id="1", cron="0 8 * * *", timezone="UTC", job_id="odd")
    with sqlite3.connect(tmp_path / "state.db") as connection:
        # An older version accepted APScheduler's own words, e.g. `last` (day of month).
        connection.execute("UPDATE jobs SET cron = '0 8 last * *' WHERE id = 'odd'")
    connection.close()
    await made.recover()
    stopped = await made.get("odd")
    assert stopped is not None and stopped.next_run is None
    (told,) = owner.told
    assert "odd" in told and "day of month" in told
    assert await made.tick() == []  # the tick does not trip over it
    await made.recover()
    assert len(owner.told) == 1  # told once, not at every start
