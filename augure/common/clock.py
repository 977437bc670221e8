"""The clock a service reads the time from: an aware datetime, injectable so a test can move
to the next day or minute."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

Clock = Callable[[], datetime]
