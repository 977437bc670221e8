"""The fake Telegram Bot API for a person: ``python -m tests.fakes.telegram --port 8081``.

Each line typed on stdin is a message from the owner to the bot; what the bot sends, edits
or uploads is printed as ``bot>`` lines, with its buttons numbered. A line starting with
``!`` presses a button of the latest bot message that has some: ``!approve``, ``!reject``,
``!always`` (the first button whose label starts with the word) or ``!2`` (by number);
``!`` alone lists them, and ``!!text`` sends the text ``!text``. docs/development.md shows
how to point the bot at it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
from typing import Any, TextIO

from tests.fakes.server import serve
from tests.fakes.telegram import ApiCall, FakeTelegram

SHOWN = {"sendMessage", "editMessageText", "sendPhoto", "sendDocument"}
DEFAULT_USER = 1001


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.telegram", description=__doc__)
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--user", type=int, default=DEFAULT_USER, help="the owner's user id")
    parser.add_argument("--token", default="123456:TEST-TOKEN", help="the bot token it accepts")
    return parser.parse_args(argv)


def buttons(message: dict[str, Any]) -> list[tuple[str, str]]:
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [(button["text"], button.get("callback_data", "")) for row in rows for button in row]


def shown(call: ApiCall) -> str:
    """A bot call as a person reads it: the text Telegram shows, then numbered buttons."""
    message = call.response["result"]
    what = message.get("text") or message.get("caption") or ""
    if "photo" in message:
        what = f"[photo] {what}"
    elif "document" in message:
        what = f"[document {message['document'].get('file_name', '')}] {what}"
    label = "bot>" if call.method != "editMessageText" else f"bot (edits {message['message_id']})>"
    lines = [f"{label} {what.strip()}"]
    lines += [f"  [{n}] {text}" for n, (text, _) in enumerate(buttons(message), 1)]
    return "\n".join(lines)


def chosen(choices: list[tuple[str, str]], word: str) -> str | None:
    """The callback data of the button `word` names: its number, or the start of its label."""
    if word.isdigit() and 1 <= int(word) <= len(choices):
        return choices[int(word) - 1][1]
    for text, data in choices:
        if text.lstrip("✓ ").lower().startswith(word.lower()):
            return data
    return None


class Console:
    """Reads the person's lines and prints the bot's answers, until the server stops."""

    def __init__(self, telegram: FakeTelegram, user: int, out: TextIO = sys.stdout) -> None:
        self.telegram, self.user, self.out = telegram, user, out
        self.with_buttons: dict[str, Any] | None = None  # latest bot message with buttons

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def run(self) -> None:
        self.say(f"fake Telegram on {self.telegram.root}; type as user {self.user}")
        await asyncio.gather(self.read(), self.show())

    async def read(self) -> None:
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        # A daemon thread, not the loop's executor: a blocked read must not hold up the exit.
        def pump() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line.rstrip("\n"))
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=pump, daemon=True).start()
        while (line := await lines.get()) is not None:
            self.typed(line)

    def typed(self, line: str) -> None:
        if not line.strip():
            return
        if line.startswith("!") and not line.startswith("!!"):
            self.press(line[1:].strip())
        else:
            self.telegram.inject_message(self.user, line[1:] if line.startswith("!!") else line)

    def press(self, word: str) -> None:
        choices = buttons(self.with_buttons or {})
        if not word or not choices:
            listed = ", ".join(f"[{n}] {t}" for n, (t, _) in enumerate(choices, 1))
            self.say(f"buttons: {listed or 'none yet'}")
            return
        data = chosen(choices, word)
        if data is None or self.with_buttons is None:
            self.say(f"no button {word!r}; buttons: {', '.join(t for t, _ in choices)}")
            return
        try:
            self.telegram.press_button(self.user, self.with_buttons["message_id"], data)
        except LookupError as gone:  # the bot took its buttons away since
            self.say(str(gone))

    async def show(self) -> None:
        printed = 0
        while True:
            try:
                calls = await self.telegram.wait_for(
                    lambda c: c.method in SHOWN, count=printed + 1, timeout=3600
                )
            except TimeoutError:
                continue
            for call in calls[printed:]:
                self.say(shown(call))
                if buttons(call.response["result"]):
                    self.with_buttons = call.response["result"]
            printed = len(calls)


async def run(argv: list[str] | None = None) -> None:
    chosen_options = options(argv)
    telegram = FakeTelegram(token=chosen_options.token)
    console = Console(telegram, chosen_options.user)
    await serve(telegram, chosen_options.port, console.run)


def main(argv: list[str] | None = None) -> None:
    asyncio.run(run(argv))
