"""The owner, as the in-process adversarial tests need one: an approver that answers every
request at once — rejecting by default, approving (and `Allow in this chat` where offered)
when told — and records what it was asked."""

from __future__ import annotations

import asyncio
from typing import Any

from augure.approval.gate import ApprovalRequest, Decide, Decision, Verdict
from augure.core.app import Core


class Owner:
    name = "owner"

    def __init__(self) -> None:
        self.approve = False
        self.asked: list[ApprovalRequest] = []

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any] | None:
        self.asked.append(request)
        decision = Decision.APPROVED if self.approve else Decision.REJECTED
        in_chat = self.approve and request.in_chat

        async def press() -> None:
            await decide(decision, "owner", in_chat=in_chat)

        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(press()))
        return None

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        return None


async def settled(core: Core) -> None:
    """Every background task ended and was reported in its chat."""
    assert core.tasks is not None
    for _ in range(2000):
        rows = await core.tasks.tasks.list(limit=100)
        if all(r.status != "running" and r.notified for r in rows):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("background work did not settle")
