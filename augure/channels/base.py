"""The one contract every channel (Telegram, the terminal, later the dashboard) implements.

A channel is built before the core and handed to `Core.open` as an approver and as the
notifier; what it receives (updates, lines of input) is handled by its own inbound side, which
is given the core. Nothing is attached to the core after it is built.
"""

from __future__ import annotations

from typing import Protocol

from augure.approval.gate import Approver
from augure.tools.base import Artifact


class Notifier(Protocol):
    """Delivers outside a turn: scheduled jobs' results, recovery notices."""

    async def send(self, chat_id: str, markdown: str) -> None:
        """Send a message to that chat, or to the owner when the chat is not one of this
        channel's (a job created from the terminal)."""
        ...

    async def edit(self, chat_id: str, message_id: int, markdown: str) -> None:
        """Replace a message already shown (a streamed preview) with this text."""
        ...


class Channel(Notifier, Approver, Protocol):
    """Sends, edits, asks approval (present, then conclude) and delivers files."""

    async def deliver(self, chat_id: str, artifact: Artifact) -> None:
        """Deliver a file a tool produced: an image as a photo, anything else as a file."""
        ...
