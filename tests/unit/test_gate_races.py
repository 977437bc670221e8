"""The approval gate's races: a press, the timeout and a restart decide one request; exactly
one of them wins, and what the caller is told is what was recorded."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from augure.approval.gate import ApprovalGate, ApprovalRequest, Decide, Decision, Verdict
from augure.store.audit import Audit
from augure.store.state import Store


class Owner:
    """An approver that records what it was shown and how each request was concluded."""

    name = "owner"

    def __init__(self) -> None:
        self.presented: list[str] = []
        self.concluded: list[tuple[str, Decision]] = []

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any] | None:
        self.presented.append(request.id)
        return {"message": request.id}

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        assert ref is not None
        self.concluded.append((ref["message"], verdict.decision))


async def pending_request(audit: Audit) -> ApprovalRequest:
    invocation = await audit.create(
        tool="send_note", origin="chat", arguments={"to": "x"}, chat_id="1", turn_id="t",
        target="send_note:to=x", approval_status="pending",
    )  # fmt: skip
    return ApprovalRequest(invocation, "send_note", {"to": "x"}, "1", "chat", None)


async def test_a_press_racing_the_timeout_has_one_winner(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    audit = Audit(store)
    owner = Owner()
    gate = ApprovalGate(audit, 0.05, [owner])
    for attempt in range(40):
        request = await pending_request(audit)
        asking = asyncio.create_task(gate.request(request))
        await asyncio.sleep(0.04 + (attempt % 5) * 0.005)  # around the timeout
        pressed = await gate.decide(request.id, Decision.APPROVED, "owner")
        told = await asking
        recorded = await audit.get(request.id)
        assert recorded is not None
        assert told.decision.value == recorded["approval_status"]
        assert (pressed is not None) == (told.decision is Decision.APPROVED)
        assert owner.concluded[-1] == (request.id, told.decision)
    assert len(owner.concluded) == len(owner.presented) == 40
    await store.close()


async def test_a_press_racing_a_restart_has_one_winner(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    audit = Audit(store)
    running, restarted = ApprovalGate(audit, 30, [Owner()]), ApprovalGate(audit, 30)
    for _ in range(10):
        request = await pending_request(audit)
        asking = asyncio.create_task(running.request(request))
        await asyncio.sleep(0.01)
        results = await asyncio.gather(
            running.decide(request.id, Decision.APPROVED, "owner"), restarted.reject_stale()
        )
        told = await asyncio.wait_for(asking, 5)  # a decision by the other gate is picked up
        recorded = await audit.get(request.id)
        assert recorded is not None and told.decision.value == recorded["approval_status"]
        assert (results[0] is not None) == (recorded["decided_by"] == "owner")
    await running.close()
    await store.close()


async def test_nobody_to_ask_is_a_rejection(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    audit = Audit(store)
    verdict = await ApprovalGate(audit, 5).request(await pending_request(audit))
    assert verdict.decision is Decision.REJECTED and not verdict.approved
    await store.close()


class SlowOwner(Owner):
    """Sending the request takes a while (a slow network to Telegram)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = asyncio.Event()
        self.release = asyncio.Event()

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any] | None:
        self.sent.set()
        await self.release.wait()
        return await super().present(request, decide)


async def test_a_call_cancelled_while_its_request_is_sent_still_takes_the_buttons_away(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "state.db")
    audit = Audit(store)
    owner = SlowOwner()
    gate = ApprovalGate(audit, 30, [owner])
    request = await pending_request(audit)
    asking = asyncio.create_task(gate.request(request))
    await owner.sent.wait()
    asking.cancel()  # a background task cancelled by the owner, mid-send
    await asyncio.sleep(0.01)
    owner.release.set()  # the message arrives in the chat after all
    with contextlib.suppress(asyncio.CancelledError):
        await asking
    assert owner.concluded == [(request.id, Decision.REJECTED)]
    recorded = await audit.get(request.id)
    assert recorded is not None and recorded["approval_status"] == "rejected"
    await store.close()
