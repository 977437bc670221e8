"""What the door's desks raise that a caller catches and tells the owner in one line: the
state unreadable or busy, a job refused (its message says why)."""

from __future__ import annotations

from augure.scheduler.jobs import JobError
from augure.store.connection import StateError, StoreBusy

__all__ = ["JobError", "StateError", "StoreBusy"]
