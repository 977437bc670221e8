"""Long calls shown while they run (docs/reference/execution.md#progress): one status message per
chat, one line per call.

The executor tells a `Progress` port when a call starts, reports a line, and ends. The
`StatusBoard` here is the channel-neutral implementation: a call that ends within
`threshold` seconds shows nothing; a longer one gets its line in the chat's status message
(tool, elapsed time, latest progress line), which is edited at most once per `interval` and
only when its text changed; each line is replaced by its call's outcome, and once every call
of a message has ended, the message is left showing the outcomes. A channel supplies only
the `StatusSurface` (post a text, replace it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

log = logging.getLogger(__name__)

THRESHOLD_SECONDS = 3.0  # a call shorter than this shows nothing
INTERVAL_SECONDS = 3.0  # at most one post or edit of a chat's status message per interval
LINE_CHARS = 200  # a progress line, as shown
MESSAGE_CHARS = 4000  # under Telegram's 4,096, whatever the number of calls

Outcome = Literal["done", "failed", "rejected", "cancelled"]

# Terminal escapes (colours, cursor moves, titles) as whole sequences, then any other control.
_ESCAPE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]+")


def clean_line(line: str, redact: Callable[[str], str]) -> str:
    """What may be shown of a tool's progress line: one line, no control characters (no
    terminal escapes, no bidi tricks), secrets redacted before it is cut to LINE_CHARS."""
    text = " ".join(_CONTROL.sub(" ", _ESCAPE.sub("", line)).split())
    text = redact(text)
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


class Progress(Protocol):
    """Where the executor announces calls; implementations never block and never raise."""

    def started(self, call: str, chat_id: str, tool: str) -> None: ...

    def reported(self, call: str, line: str) -> None: ...

    def ended(self, call: str, outcome: Outcome) -> None: ...


class StatusSurface(Protocol):
    """A channel's side: show a new status text in a chat, or replace the one shown."""

    def accepts(self, chat_id: str) -> bool:
        """Whether this channel can show anything in that chat."""
        ...

    async def post(self, chat_id: str, text: str) -> int:
        """Send the text; return the message's id."""
        ...

    async def replace(self, chat_id: str, message_id: int, text: str) -> None: ...


@dataclass
class _Running:
    tool: str
    chat_id: str
    started: float
    line: str = ""
    outcome: Outcome | None = None
    ended: float | None = None
    shown: bool = False  # has its line in the chat's status message


@dataclass
class _Message:
    """A chat's status message and the calls listed in it, in the order they appeared."""

    calls: list[_Running] = field(default_factory=list)
    message_id: int | None = None
    text: str = ""
    task: asyncio.Task[None] | None = None


class StatusBoard:
    def __init__(
        self,
        surface: StatusSurface,
        threshold: float = THRESHOLD_SECONDS,
        interval: float = INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.surface = surface
        self.threshold = threshold
        self.interval = interval
        self.clock = clock
        self._calls: dict[str, _Running] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._chats: dict[str, _Message] = {}

    # -- the Progress port -----------------------------------------------------------------

    def started(self, call: str, chat_id: str, tool: str) -> None:
        if not self.surface.accepts(chat_id):
            return
        self._calls[call] = _Running(tool, chat_id, self.clock())
        loop = asyncio.get_running_loop()
        self._timers[call] = loop.call_later(self.threshold, self._show, call)

    def reported(self, call: str, line: str) -> None:
        running = self._calls.get(call)
        if running is not None and line:
            running.line = line

    def ended(self, call: str, outcome: Outcome) -> None:
        running = self._calls.pop(call, None)
        timer = self._timers.pop(call, None)
        if timer is not None:
            timer.cancel()
        if running is not None and running.shown:
            running.outcome, running.ended = outcome, self.clock()

    async def close(self) -> None:
        """Stop editing (at shutdown): what is shown stays as it is."""
        for timer in self._timers.values():
            timer.cancel()
        tasks = [m.task for m in self._chats.values() if m.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._timers.clear()
        self._chats.clear()

    # -- the status messages ---------------------------------------------------------------

    def _show(self, call: str) -> None:
        """The call has run past the threshold: give it a line in its chat's message."""
        self._timers.pop(call, None)
        running = self._calls.get(call)
        if running is None:
            return
        running.shown = True
        message = self._chats.setdefault(running.chat_id, _Message())
        message.calls.append(running)
        if message.task is None:
            message.task = asyncio.get_running_loop().create_task(self._keep(running.chat_id))

    async def _keep(self, chat_id: str) -> None:
        """Post the chat's message, then edit it once per interval while it changes; done
        when every call listed in it has ended and the last text is shown."""
        message = self._chats[chat_id]
        while True:
            # Read together, with no await between: `finished` is about exactly this text.
            listed = len(message.calls)
            finished = all(c.outcome is not None for c in message.calls)
            text = self._compose(message)
            if text != message.text:
                try:
                    if message.message_id is None:
                        message.message_id = await self.surface.post(chat_id, text)
                    else:
                        await self.surface.replace(chat_id, message.message_id, text)
                    message.text = text
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # progress is a courtesy: never fail a call for it
                    log.warning("could not show progress in chat %s: %s", chat_id, exc)
            # Shown (or never to be: a dead chat is not retried forever), unless a call got
            # its line while the text was on its way.
            if finished and len(message.calls) == listed:
                break
            await asyncio.sleep(self.interval)
        # Calls that reach the threshold from now on get a fresh message below the answer.
        if self._chats.get(chat_id) is message:
            del self._chats[chat_id]

    def _compose(self, message: _Message) -> str:
        now = self.clock()
        lines = [_line(c, now) for c in message.calls]
        text = "\n".join(lines)
        if len(text) <= MESSAGE_CHARS:
            return text
        kept: list[str] = []
        for line in lines:
            if sum(len(k) + 1 for k in kept) + len(line) > MESSAGE_CHARS - 40:
                break
            kept.append(line)
        return "\n".join([*kept, f"… and {len(lines) - len(kept)} more"])


def _line(call: _Running, now: float) -> str:
    if call.outcome is None:
        elapsed = _duration(now - call.started)
        return f"⏳ {call.tool} — {elapsed}" + (f" — {call.line}" if call.line else "")
    took = _duration((call.ended or now) - call.started)
    return {
        "done": f"✓ {call.tool} — done in {took}",
        "failed": f"✗ {call.tool} — failed after {took}",
        "rejected": f"✗ {call.tool} — rejected after {took}",
        "cancelled": f"✗ {call.tool} — cancelled after {took}",
    }[call.outcome]


def _duration(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
