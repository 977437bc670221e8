"""The calendar's writes against a real CalDAV server (Radicale on loopback), through the
executor with an owner who answers: each asks, shows the event as it will be, writes nothing
when rejected, and never overwrites what changed after the owner was asked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from augure.common.caller import Caller
from augure.config.settings import load_config
from augure.core.app import Core
from augure.tools.result import ToolResult
from tests.cores import Cores
from tests.radicale import Radicale
from tests.security.owner import Owner
from tests.unit.test_calendar import PARIS, vevent


@pytest.fixture
async def core(
    tmp_path: Path,
    radicale: Radicale,
) -> AsyncIterator[tuple[Core, Owner]]:
    home = tmp_path / "home"
    home.mkdir()
    settings = radicale.settings()
    (home / "augure.toml").write_text(
        f'[agent]\ntimezone = "{PARIS}"\n[tools.calendar]\n'
        + "".join(f'{key} = "{value}"\n' for key, value in settings.items())
    )
    opened, owner = Cores(), Owner()
    yield await opened.open(load_config(home=home), approvers=[owner]), owner
    await opened.close()


async def write(core: Core, **arguments: Any) -> ToolResult:
    ctx = core.context.for_caller(Caller.of("cli"))
    return await core.executor.run("calendar", arguments, ctx)


NEW = {
    "action": "create",
    "title": "Flight to Lisbon",
    "start": "2026-03-28T10:00",
    "end": "2026-03-28T12:30[Europe/Lisbon]",
    "location": "CDG T2",
    "description": "Seat 14A",
    "recurrence": "RRULE:FREQ=YEARLY;COUNT=2",
}


async def test_create_asks_with_the_event_as_it_will_be(
    core: tuple[Core, Owner],
    radicale: Radicale,
) -> None:
    app, owner = core
    rejected = await write(app, **NEW)
    assert rejected.output == "Tool call rejected by user."
    assert radicale.events("Personal") == []
    (asked,) = owner.asked
    assert asked.arguments["in calendar"] == "Personal"
    assert asked.arguments["the event as it will be"] == {
        "title": "Flight to Lisbon",
        "start": "2026-03-28 10:00 Europe/Paris",
        "end": "2026-03-28 12:30 Europe/Lisbon",
        "all_day": False,
        "when, for you": "2026-03-28 10:00–13:30 Europe/Paris",
        "location": "CDG T2",
        "repeats": "FREQ=YEARLY;COUNT=2",
        "description": "Seat 14A",
    }
    owner.approve = True
    created = await write(app, **NEW)
    assert created.success, created.output
    assert created.output.startswith(
        "Created in Personal: 2026-03-28 10:00–13:30 Europe/Paris Flight to Lisbon (id "
    )
    (stored,) = radicale.events("Personal")
    assert "SUMMARY:Flight to Lisbon" in stored and "RRULE:FREQ=YEARLY;COUNT=2" in stored
    assert "DTSTART;TZID=Europe/Paris:20260328T100000" in stored
    assert "DTEND;TZID=Europe/Lisbon:20260328T123000" in stored


async def test_an_all_day_create_shows_dates(
    core: tuple[Core, Owner],
    radicale: Radicale,
) -> None:
    app, owner = core
    owner.approve = True
    created = await write(
        app, action="create", title="Holiday", start="2026-04-06", end="2026-04-07", all_day=True
    )
    assert created.success, created.output
    shown = owner.asked[0].arguments["the event as it will be"]
    assert (shown["start"], shown["end"], shown["all_day"]) == ("2026-04-06", "2026-04-07", True)
    (stored,) = radicale.events("Personal")
    assert "DTSTART;VALUE=DATE:20260406" in stored and "DTEND;VALUE=DATE:20260408" in stored


async def test_update_asks_showing_before_and_after_and_keeps_what_it_does_not_set(
    core: tuple[Core, Owner],
    radicale: Radicale,
) -> None:
    app, owner = core
    radicale.put(
        "Personal",
        vevent(
            "dentist",
            "SUMMARY:Dentist",
            "LOCATION:Rue de Rivoli",
            "BEGIN:VALARM",
            "ACTION:DISPLAY",
            "TRIGGER:-PT1H",
            "END:VALARM",
            f"DTSTART;TZID={PARIS}:20260327T100000",
            f"DTEND;TZID={PARIS}:20260327T103000",
        ),
    )
    move = {"action": "update", "event_id": "dentist", "start": "2026-04-03T15:00"}
    assert (await write(app, **move)).output == "Tool call rejected by user."
    (stored,) = radicale.events("Personal")
    assert "20260327T100000" in stored  # nothing written
    (asked,) = owner.asked
    assert asked.arguments["the event as it will be"]["start"] == "2026-04-03 15:00 Europe/Paris"
    assert asked.arguments["the event as it will be"]["end"] == "2026-04-03 15:30 Europe/Paris"
    assert asked.arguments["the event as it will be"]["location"] == "Rue de Rivoli"
    assert asked.arguments["the event as it is now"]["start"] == "2026-03-27 10:00 Europe/Paris"
    owner.approve = True
    updated = await write(app, **move)
    assert updated.success, updated.output
    (stored,) = radicale.events("Personal")
    assert "DTSTART;TZID=Europe/Paris:20260403T150000" in stored
    assert "TRIGGER:-PT1H" in stored and "LOCATION:Rue de Rivoli" in stored


async def test_delete_asks_showing_the_event_and_deletes_only_when_approved(
    core: tuple[Core, Owner],
    radicale: Radicale,
) -> None:
    app, owner = core
    radicale.put(
        "Personal",
        vevent(
            "dentist",
            "SUMMARY:Dentist",
            f"DTSTART;TZID={PARIS}:20260327T100000",
            f"DTEND;TZID={PARIS}:20260327T103000",
        ),
    )
    gone = {"action": "delete", "event_id": "dentist"}
    assert (await write(app, **gone)).output == "Tool call rejected by user."
    assert len(radicale.events("Personal")) == 1
    (asked,) = owner.asked
    assert asked.arguments["the event it deletes"]["title"] == "Dentist"
    owner.approve = True
    deleted = await write(app, **gone)
    assert deleted.output == "Deleted 'Dentist' from Personal."
    assert radicale.events("Personal") == []
    missing = await write(app, **gone)
    assert not missing.success and "no event with id 'dentist' in Personal" in missing.output


async def test_reads_ask_nothing(
    core: tuple[Core, Owner],
    radicale: Radicale,
) -> None:
    app, owner = core
    for action in ("list", "calendars"):
        assert (await write(app, action=action)).success
    assert (await write(app, action="search", query="x")).success
    assert owner.asked == []


async def test_an_update_removes_the_rule_when_asked_with_an_empty_one(
    core: tuple[Core, Owner],
    radicale: Radicale,
) -> None:
    app, owner = core
    radicale.put(
        "Personal",
        vevent("standup", "SUMMARY:Standup", "RRULE:FREQ=WEEKLY;BYDAY=MO",
               f"DTSTART;TZID={PARIS}:20260323T090000", f"DTEND;TZID={PARIS}:20260323T093000"),
    )  # fmt: skip
    owner.approve = True
    once = await write(app, action="update", event_id="standup", recurrence="")
    assert once.success, once.output
    assert owner.asked[0].arguments["the event as it will be"]["repeats"] == "no"
    assert owner.asked[0].arguments["the event as it is now"]["repeats"] == "FREQ=WEEKLY;BYDAY=MO"
    (stored,) = radicale.events("Personal")
    assert "RRULE:FREQ=WEEKLY" not in stored


async def test_an_event_changed_between_the_request_and_the_press_is_not_overwritten(
    core: tuple[Core, Owner],
    radicale: Radicale,
) -> None:
    app, owner = core

    def dentist(hour: int) -> str:
        return vevent(
            "dentist", "SUMMARY:Dentist", f"DTSTART;TZID={PARIS}:20260327T{hour}0000",
            f"DTEND;TZID={PARIS}:20260327T{hour}3000",
        )  # fmt: skip

    radicale.put("Personal", dentist(10))
    present = owner.present

    async def moved_meanwhile(request: Any, decide: Any) -> Any:
        radicale.put("Personal", dentist(11))  # someone moves it on their phone
        return await present(request, decide)

    owner.present = moved_meanwhile  # type: ignore[method-assign]
    owner.approve = True
    result = await write(app, action="update", event_id="dentist", title="Dentist (moved)")
    assert not result.success and "changed" in result.output, result.output
    (stored,) = radicale.events("Personal")
    assert "SUMMARY:Dentist\r\n" in stored or "SUMMARY:Dentist\n" in stored
    assert "20260327T110000" in stored
