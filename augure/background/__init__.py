"""Background work (docs/reference/execution.md#background-work): calls released from their turn,
their tools, their report.

May import (docs/architecture.md, "Where things are"): tools, scheduler, sandbox, memory,
approval, store, llm, host, config, common.
"""

from augure.background.manager import TaskManager

__all__ = ["TaskManager"]
