"""Background work (docs/reference/execution.md#background-work): calls released from their turn,
their tools, their report."""

from augure.background.manager import TaskManager

__all__ = ["TaskManager"]
