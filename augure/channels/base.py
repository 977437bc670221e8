"""The one contract every channel (Telegram, the terminal, later the dashboard) implements.

A channel is built before the core and handed to `Augure.running` as an approver and as the
notifier; what it receives (updates, lines of input) is handled by its own inbound side, which
calls the desks of the door the lifespan yields (augure.core.door). Nothing is attached to the
core after it is built.
"""

from __future__ import annotations

from typing import Protocol

from augure.common.ports import Approver, Notifier


class Channel(Notifier, Approver, Protocol):
    """Sends, edits, asks approval (present, then conclude) and delivers files."""
