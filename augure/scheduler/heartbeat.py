"""The heartbeat (docs/reference/personas.md#heartbeat): at each interval inside the active hours, a
proactive turn over the owner's checklist. It costs nothing when there is nothing to check: an empty
or missing
checklist makes no model call; an answer starting with HEARTBEAT_OK sends nothing.

Its settings are `augure/config/heartbeat.py`; what it runs and where it delivers are
handed in as callables by the composition root.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from zoneinfo import ZoneInfo

from augure.config.heartbeat import HeartbeatConfig, active_window
from augure.llm.spend import BudgetReached

log = logging.getLogger(__name__)

OK = "HEARTBEAT_OK"
PROMPT = f"""\
Heartbeat: a periodic check that you run on your own; the owner did not write this.
Go through the checklist below. If nothing needs the owner's attention now, answer with \
exactly {OK} and nothing else. Otherwise answer with what the owner should know or do, \
briefly; that answer is sent to them.

# Checklist

"""
# What a checklist may hold that asks nothing: an HTML comment (one left open runs to the
# end, as in CommonMark), and lines that are only a heading, a list mark with or without an
# empty box, a thematic break (`---`) or a setext underline (`===`).
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_NO_ITEM = re.compile(r"#{1,6}(?:\s.*)?|(?:[-*+]|\d{1,9}[.)])(?:\s*\[[ xX]?\])?|[-*_=\s]*")


class Beat(StrEnum):
    """What one beat did; tests and the log read it."""

    ASLEEP = "outside the active hours"
    NOTHING = "empty or missing checklist"
    BUSY = "a turn of the owner's chat was running"
    NO_OWNER = "no owner chat"
    OK = "nothing to report"
    SENT = "sent to the owner"
    FAILED = "failed"
    OVER_BUDGET = "skipped: a [budget] cap is reached"


class Heartbeat:
    def __init__(
        self,
        settings: HeartbeatConfig,
        checklist: Path,
        zone: str,
        owner_chat: str | None,
        run_turn: Callable[[str], Awaitable[str]],
        busy: Callable[[str], bool],
        deliver: Callable[[str, str], Awaitable[None]] | None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settings = settings
        self.checklist = checklist
        self.zone = ZoneInfo(zone)
        self.owner_chat = owner_chat
        self.run_turn = run_turn
        self.busy = busy
        self.deliver = deliver
        self.clock = clock
        self.beats: list[Beat] = []  # what each beat did, oldest first
        self._task: asyncio.Task[None] | None = None
        self._beaten = asyncio.Condition()

    def awake(self) -> bool:
        start, end = active_window(self.settings.active_hours)
        now = self.clock().astimezone(self.zone).time()
        if start <= end:
            return start <= now <= end
        return now >= start or now <= end  # wraps past midnight

    def tasks(self) -> str:
        """The checklist, or "" when it has no item to check (missing, empty, or only
        headings, comments and empty items): such a beat costs no model call."""
        try:
            text = self.checklist.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return ""
        lines = _COMMENT.sub("", text).splitlines()
        return text if any(not _NO_ITEM.fullmatch(line.strip()) for line in lines) else ""

    async def beat(self) -> Beat:
        outcome = await self._beat()
        log.info("heartbeat: %s", outcome.value)
        async with self._beaten:
            self.beats.append(outcome)
            self._beaten.notify_all()
        return outcome

    async def _beat(self) -> Beat:
        if not self.awake():
            return Beat.ASLEEP
        checklist = self.tasks()
        if not checklist:
            return Beat.NOTHING  # no model call at all
        if self.owner_chat is None:
            return Beat.NO_OWNER
        if self.busy(self.owner_chat):
            return Beat.BUSY  # the owner is being answered: the next interval will do
        try:
            answer = await self.run_turn(PROMPT + checklist)
            if answer.lstrip().startswith(OK):
                return Beat.OK
            if self.deliver is not None:
                await self.deliver(self.owner_chat, answer)
        except BudgetReached:
            return Beat.OVER_BUDGET  # recorded as skipped in the spend ledger
        except Exception:
            log.exception("heartbeat turn failed")
            return Beat.FAILED
        return Beat.SENT

    async def wait_for_beats(self, count: int) -> list[Beat]:
        """Until `count` beats have happened (for tests and shutdown)."""
        async with self._beaten:
            await self._beaten.wait_for(lambda: len(self.beats) >= count)
            return list(self.beats)

    def start(self) -> None:
        if self.settings.enabled and self._task is None:
            self._task = asyncio.create_task(self._run(), name="heartbeat")

    async def stop(self) -> None:
        if self._task is not None:
            task, self._task = self._task, None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.settings.interval_minutes * 60)
            await self.beat()
