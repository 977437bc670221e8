"""The scheduler with a controllable clock: fire times, DST, misfires, exactly-once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from augure.common.ports import NOT_KNOWN, Sources
from augure.scheduler.jobs import JobError
from augure.scheduler.runner import Scheduler
from augure.store.state import Store

START = datetime(2026, 3, 27, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class World:
    """Turns and deliveries as a channel would see them."""

    def __init__(self) -> None:
        self.turns: list[tuple[str, str]] = []
        self.delivered: list[tuple[str, str]] = []
        self.deliver_fails = False
        self.hang = False

    async def run_turn(
        self, conversation: str, prompt: str, chain: tuple[str, ...], sources: tuple[str, ...]
    ) -> str:
        self.turns.append((conversation, prompt))
        if self.hang:
            await asyncio.Event().wait()
        return f"done: {prompt}"

    async def send(self, chat_id: str, text: str, sources: Sources = NOT_KNOWN) -> None:
        if self.deliver_fails:
            raise ConnectionError("Telegram is down")
        self.delivered.append((chat_id, text))


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(tmp_path / "state.db")
    yield opened
    await opened.close()


def scheduler(store: Store, clock: Clock, world: World, grace: int = 60) -> Scheduler:
    made = Scheduler(
        store=store,
        run_turn=world.run_turn,
        default_zone="Europe/Paris",
        misfire_grace_seconds=grace,
        owner_chat="1001",
        clock=clock,
        notifier=world,
    )
    return made


async def tick(made: Scheduler) -> int:
    tasks = await made.tick()
    await asyncio.gather(*tasks)
    return len(tasks)


async def test_one_shot_fires_at_its_time_once_and_is_removed(store: Store) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    job = await made.create(prompt="call mum", chat_id="42", run_at="2026-03-27T13:10")
    assert job.next_run == "2026-03-27T12:10:00+00:00"  # no offset: the agent's zone (CET)

    clock.advance(minutes=9, seconds=59)
    assert await tick(made) == 0
    clock.advance(seconds=1)
    assert await tick(made) == 1
    assert world.turns == [(f"job:{job.id}", "call mum")]
    assert world.delivered == [("42", f"⏰ *{job.id}*\n\ndone: call mum")]
    assert await made.jobs() == []
    clock.advance(minutes=5)
    assert await tick(made) == 0


async def test_cron_follows_the_zone_across_the_dst_change(store: Store) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    job = await made.create(prompt="brief me", chat_id="42", cron="0 9 * * *")
    fired = []
    for _ in range(3):
        assert job.next_run is not None
        clock.now = datetime.fromisoformat(job.next_run)
        assert await tick(made) == 1
        fired.append(clock.now.isoformat())
        updated = await made.get(job.id)
        assert updated is not None
        job = updated
    # 09:00 in Paris: UTC+1 before the change of 29 March 2026, UTC+2 after it.
    assert fired == [
        "2026-03-28T08:00:00+00:00",
        "2026-03-29T07:00:00+00:00",
        "2026-03-30T07:00:00+00:00",
    ]
    assert job.last_outcome == "ok" and len(world.delivered) == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cron": "61 * * * *"}, "invalid cron"),
        ({"cron": "0 9 * * * *"}, "5 fields"),
        ({"run_at": "2026-03-27T11:00"}, "in the past"),
        ({"run_at": "tomorrow at nine"}, "not ISO 8601"),
        ({"cron": "0 9 * * *", "run_at": "2026-04-01T09:00"}, "exactly one"),
        ({}, "exactly one"),
        ({"cron": "0 9 * * *", "timezone": "Mars/Base"}, "unknown time zone"),
        ({"cron": "0 9 * * *", "job_id": "../etc"}, "job id"),
    ],
)
async def test_bad_jobs_are_refused_clearly(
    store: Store, options: dict[str, str], message: str
) -> None:
    made = scheduler(store, Clock(), World())
    with pytest.raises(JobError, match=message):
        await made.create(prompt="x", chat_id="42", **options)
    assert await made.jobs() == []


async def test_a_miss_within_the_grace_runs_once_after_a_restart(store: Store) -> None:
    clock, world = Clock(), World()
    await scheduler(store, clock, world).create(
        prompt="water plants", chat_id="42", run_at="2026-03-27T13:05", job_id="plants"
    )
    clock.advance(minutes=5, seconds=45)  # was down at 12:05; back 45 s late, grace 60 s
    restarted = scheduler(store, clock, world)
    await restarted.recover()
    assert await tick(restarted) == 1
    assert world.turns == [("job:plants", "water plants")]


async def test_a_miss_past_the_grace_is_reported_not_run_and_recurring_ones_coalesce(
    store: Store,
) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    await made.create(prompt="once", chat_id="42", run_at="2026-03-27T13:05", job_id="once")
    await made.create(prompt="daily", chat_id="42", cron="0 14 * * *", job_id="daily")
    clock.advance(days=3, hours=1)  # down for three days: daily runs and the one-shot missed
    restarted = scheduler(store, clock, world)
    assert await tick(restarted) == 0
    assert world.turns == []
    notices = [text for _, text in world.delivered]
    assert len(notices) == 2 and all(text.startswith("Missed scheduled job") for text in notices)
    (daily,) = await restarted.jobs()  # the one-shot is gone, the daily one moved on
    assert daily.id == "daily" and daily.last_outcome == "missed"
    assert daily.next_run == "2026-03-31T12:00:00+00:00"
    clock.now = datetime(2026, 3, 31, 12, 0, tzinfo=UTC)
    assert await tick(restarted) == 1


async def test_missed_runs_within_the_grace_coalesce_into_one(store: Store) -> None:
    clock, world = Clock(), World()
    await scheduler(store, clock, world, grace=600).create(
        prompt="poll", chat_id="42", cron="*/5 * * * *", job_id="poll"
    )
    clock.advance(hours=1, minutes=2)  # twelve runs missed; the last, 13:00, is 2 min late
    restarted = scheduler(store, clock, world, grace=600)
    assert await tick(restarted) == 1
    assert await tick(restarted) == 0
    assert len(world.turns) == 1
    job = await restarted.get("poll")
    assert job is not None and job.last_run == "2026-03-27T13:00:00+00:00"
    assert job.next_run == "2026-03-27T13:05:00+00:00"


async def test_two_processes_never_run_the_same_instant_twice(store: Store) -> None:
    clock, world = Clock(), World()
    first, second = scheduler(store, clock, world), scheduler(store, clock, world)
    await first.create(prompt="p", chat_id="42", cron="*/5 * * * *", job_id="five")
    clock.advance(minutes=5)
    started = await first.tick() + await second.tick()
    await asyncio.gather(*started)
    assert len(world.turns) == 1


async def test_a_reply_stored_before_a_crash_is_delivered_after_it_without_a_second_turn(
    store: Store,
) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    await made.create(prompt="remind", chat_id="42", run_at="2026-03-27T13:01", job_id="r")
    clock.advance(minutes=1)
    world.deliver_fails = True  # the process "dies" before Telegram accepts the message
    assert await tick(made) == 1
    assert world.delivered == []

    world.deliver_fails = False
    restarted = scheduler(store, clock, world)
    await restarted.recover()
    assert world.delivered == [("42", "⏰ *r*\n\ndone: remind")]
    assert len(world.turns) == 1
    await restarted.recover()
    assert len(world.delivered) == 1


async def test_a_turn_cut_off_by_a_crash_is_reported_not_repeated(store: Store) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    await made.create(prompt="send report", chat_id="42", run_at="2026-03-27T13:01", job_id="s")
    clock.advance(minutes=1)
    world.hang = True
    tasks = await made.tick()  # the turn starts and never finishes: the process dies
    await asyncio.sleep(0.01)
    assert len(world.turns) == 1
    for task in tasks:
        task.cancel()
    world.hang = False
    restarted = scheduler(store, clock, world)
    await restarted.recover()
    clock.advance(minutes=1)
    assert await tick(restarted) == 0
    assert len(world.turns) == 1
    ((chat, notice),) = world.delivered
    assert chat == "42" and "interrupted by a restart" in notice and "not run again" in notice


async def test_pause_holds_jobs_and_resume_runs_them(store: Store) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    await made.create(prompt="p", chat_id="42", run_at="2026-03-27T13:01", job_id="p")
    await made.set_paused(True)
    clock.advance(minutes=1)
    assert await tick(made) == 0 and await made.paused()
    await made.set_paused(False)
    assert await tick(made) == 1


async def test_run_now_keeps_the_schedule(store: Store) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    job = await made.create(prompt="p", chat_id="42", cron="0 9 * * *", job_id="morning")
    assert await made.request_run("morning", "cli") and not await made.request_run("nope", "cli")
    assert await tick(made) == 1
    after = await made.get("morning")
    assert after is not None and after.next_run == job.next_run
    assert await tick(made) == 0


async def test_a_skills_schedule_cannot_be_removed_as_a_job(store: Store) -> None:
    made = scheduler(store, Clock(), World())
    await made.schedule_skill("daily-digest", "0 8 * * *", None)
    with pytest.raises(JobError, match="skill's schedule"):
        await made.remove("skill:daily-digest")
    assert await made.unschedule_skill("daily-digest")


async def test_a_paused_job_does_not_fire_keeps_its_schedule_and_fires_again_once_resumed(
    store: Store,
) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    job = await made.create(prompt="brief me", chat_id="42", cron="0 9 * * *", job_id="brief")
    other = await made.create(prompt="other", chat_id="42", cron="0 9 * * *", job_id="other")
    paused = await made.pause_job("brief")
    assert paused.paused and "(paused)" in paused.describe(ZoneInfo("Europe/Paris"))
    assert job.next_run is not None and other.next_run == job.next_run
    clock.now = datetime.fromisoformat(job.next_run)
    assert await tick(made) == 1  # only the other job
    assert world.turns == [("job:other", "other")]
    skipped = await made.get("brief")
    assert skipped is not None and skipped.paused and skipped.cron == "0 9 * * *"
    assert skipped.next_run == "2026-03-29T07:00:00+00:00"  # the next run, not caught up later
    resumed = await made.resume_job("brief")
    assert not resumed.paused and resumed.next_run == skipped.next_run
    assert await tick(made) == 0  # the run skipped while paused is not caught up
    clock.now = datetime.fromisoformat(skipped.next_run)
    assert await tick(made) == 2
    assert ("job:brief", "brief me") in world.turns


async def test_a_run_missed_while_paused_and_stopped_is_not_caught_up_on_resume(
    store: Store,
) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    job = await made.create(prompt="p", chat_id="42", cron="0 9 * * *", job_id="morning")
    await made.pause_job("morning")
    assert job.next_run is not None
    # No tick while paused (the bot was stopped); resumed within the misfire grace.
    clock.now = datetime.fromisoformat(job.next_run) + timedelta(seconds=10)
    resumed = await made.resume_job("morning")
    assert resumed.next_run is not None and resumed.next_run > clock.now.isoformat()
    assert await tick(made) == 0 and world.turns == [] and world.delivered == []


async def test_a_paused_one_shot_past_its_time_is_skipped_and_the_owner_told(
    store: Store,
) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    await made.create(prompt="call", chat_id="42", run_at="2026-03-27T13:05", job_id="call")
    await made.pause_job("call")
    clock.advance(minutes=6)
    assert await tick(made) == 0 and world.turns == []
    assert await made.jobs() == []
    ((chat, notice),) = world.delivered
    assert chat == "42" and "call" in notice and "paused" in notice


async def test_pausing_an_unknown_job_or_a_skills_schedule_is_refused(store: Store) -> None:
    made = scheduler(store, Clock(), World())
    await made.schedule_skill("daily-digest", "0 8 * * *", None)
    for act in (made.pause_job, made.resume_job):
        with pytest.raises(JobError, match="no job 'nope'"):
            await act("nope")
        with pytest.raises(JobError, match="skill's schedule: pause or delete the skill"):
            await act("skill:daily-digest")
    listed = await made.get("skill:daily-digest")
    assert listed is not None and not listed.paused


async def test_resuming_a_one_shot_whose_time_passed_while_stopped_removes_it(
    store: Store,
) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    await made.create(prompt="call", chat_id="42", run_at="2026-03-27T13:05", job_id="call")
    await made.pause_job("call")
    clock.advance(minutes=6)  # no tick: the bot was stopped
    with pytest.raises(JobError, match="call was a one-time job whose time passed while paused"):
        await made.resume_job("call")
    assert await made.jobs() == []
    assert await tick(made) == 0 and world.turns == []


async def test_run_now_runs_a_paused_job_and_keeps_it_paused(store: Store) -> None:
    clock, world = Clock(), World()
    made = scheduler(store, clock, world)
    await made.create(prompt="p", chat_id="42", cron="0 9 * * *", job_id="morning")
    await made.pause_job("morning")
    assert await made.request_run("morning", "cli")
    assert await tick(made) == 1 and world.turns == [("job:morning", "p")]
    after = await made.get("morning")
    assert after is not None and after.paused


async def test_a_job_that_crashes_tells_the_owner_what_happened_without_a_class_name(
    store: Store,
) -> None:
    clock, world = Clock(), World()

    async def crashing_turn(conversation: str, prompt: str, *_: tuple[str, ...]) -> str:
        raise KeyError("internal detail")

    made = Scheduler(
        store=store,
        run_turn=crashing_turn,
        default_zone="Europe/Paris",
        misfire_grace_seconds=60,
        owner_chat="1001",
        clock=clock,
        notifier=world,
    )
    job = await made.create(prompt="brief me", chat_id="42", cron="0 14 * * *")
    clock.advance(hours=1)
    assert await tick(made) == 1
    [(chat, text)] = world.delivered
    assert chat == "42" and job.id in text
    assert "KeyError" not in text and "internal detail" not in text
    assert "could not finish" in text and "log" in text
