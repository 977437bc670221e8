"""The heartbeat's decisions with an injected clock: hours, checklist, busy chat, OK."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from augure.config.heartbeat import HeartbeatConfig
from augure.scheduler.heartbeat import OK, Beat, Heartbeat


class Owner:
    """Stands in for the agent and the channel: records what the heartbeat asked and sent."""

    def __init__(self, answer: str = OK) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.sent: list[tuple[str, str]] = []
        self.running = False

    async def run_turn(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer

    async def deliver(self, chat: str, text: str) -> None:
        self.sent.append((chat, text))

    def busy(self, chat: str) -> bool:
        return self.running


def heartbeat(
    tmp_path: Path, owner: Owner, hours: str = "08:00-22:00", utc_hour: int = 12
) -> Heartbeat:
    settings = HeartbeatConfig(enabled=True, active_hours=hours)
    moment = datetime(2026, 11, 25, utc_hour, 30, tzinfo=UTC)
    return Heartbeat(
        settings,
        tmp_path / "heartbeat.md",
        "Europe/Paris",  # UTC+1 in November
        "1001",
        owner.run_turn,
        owner.busy,
        owner.deliver,
        clock=lambda: moment,
    )


async def test_an_empty_or_missing_checklist_makes_no_model_call(tmp_path: Path) -> None:
    owner = Owner()
    beat = heartbeat(tmp_path, owner)
    assert await beat.beat() is Beat.NOTHING
    (tmp_path / "heartbeat.md").write_text("  \n\n", encoding="utf-8")
    assert await beat.beat() is Beat.NOTHING
    assert owner.prompts == [] and owner.sent == []


async def test_ok_sends_nothing_and_anything_else_is_sent(tmp_path: Path) -> None:
    (tmp_path / "heartbeat.md").write_text("- Is the oven off?\n", encoding="utf-8")
    owner = Owner(f"{OK} all quiet")
    beat = heartbeat(tmp_path, owner)
    assert await beat.beat() is Beat.OK
    assert owner.sent == [] and "- Is the oven off?" in owner.prompts[0]
    owner.answer = "The oven is still on."
    assert await beat.beat() is Beat.SENT
    assert owner.sent == [("1001", "The oven is still on.")]


async def test_a_running_turn_in_the_owner_chat_skips_the_beat(tmp_path: Path) -> None:
    (tmp_path / "heartbeat.md").write_text("check", encoding="utf-8")
    owner = Owner("news")
    owner.running = True
    assert await heartbeat(tmp_path, owner).beat() is Beat.BUSY
    assert owner.prompts == []


@pytest.mark.parametrize(
    ("hours", "utc_hour", "awake"),
    [
        ("08:00-22:00", 6, False),  # 07:30 in Paris
        ("08:00-22:00", 7, True),  # 08:30
        ("08:00-22:00", 21, False),  # 22:30
        ("22:00-06:00", 22, True),  # 23:30: the window wraps past midnight
        ("22:00-06:00", 3, True),  # 04:30
        ("22:00-06:00", 12, False),
        ("00:00-24:00", 22, True),
    ],
)
async def test_active_hours_are_in_the_agent_timezone(
    tmp_path: Path, hours: str, utc_hour: int, awake: bool
) -> None:
    (tmp_path / "heartbeat.md").write_text("check", encoding="utf-8")
    owner = Owner()
    outcome = await heartbeat(tmp_path, owner, hours, utc_hour).beat()
    assert (outcome is not Beat.ASLEEP) is awake
    assert len(owner.prompts) == (1 if awake else 0)


@pytest.mark.parametrize("hours", ["8-22", "25:00-26:00", "08:00-24:30", "08:61-09:00"])
def test_bad_active_hours_are_refused(hours: str) -> None:
    with pytest.raises(ValidationError, match="active_hours"):
        HeartbeatConfig(active_hours=hours)


def test_off_by_default() -> None:
    settings = HeartbeatConfig()
    assert (settings.enabled, settings.interval_minutes, settings.checklist) == (
        False,
        30.0,
        "heartbeat.md",
    )
