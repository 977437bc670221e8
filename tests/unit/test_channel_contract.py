"""The channel contract: the approval gate asks every approver it was built with, the first
decision from any of them wins, and every approver's message shows the outcome."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from augure.approval.gate import ApprovalGate, ApprovalRequest, Decide, Decision, Verdict
from augure.channels.console import ConsoleChannel
from augure.common.ports import NOT_KNOWN, Attachment, Sources
from augure.config.settings import load_config
from augure.core.lifespan import Augure
from augure.store.audit import Audit
from augure.store.state import Store


class Screen:
    """An approver (a dashboard, say) that records what it showed and how each message ended;
    its presses go to the gate as an inbound handler's would."""

    def __init__(self, name: str, *, broken: bool = False) -> None:
        self.name = name
        self.broken = broken
        self.decide: Decide | None = None
        self.showing = asyncio.Event()
        self.concluded: list[tuple[str, Decision]] = []

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any] | None:
        if self.broken:
            raise ConnectionError(f"{self.name} is unreachable")
        self.decide = decide
        self.showing.set()
        return {"message": f"{self.name}:{request.id}"}

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        assert ref is not None
        self.concluded.append((ref["message"], verdict.decision))


@pytest.fixture
async def audit(tmp_path: Path) -> AsyncIterator[Audit]:
    store = await Store.open(tmp_path / "state.db")
    yield Audit(store)
    await store.close()


async def pending_request(audit: Audit) -> ApprovalRequest:
    invocation = await audit.create(
        tool="send_note", origin="chat", arguments={"to": "x"}, chat_id="1", turn_id="t",
        target="send_note:to=x", approval_status="pending",
    )  # fmt: skip
    return ApprovalRequest(invocation, "send_note", {"to": "x"}, "1", "chat", None)


@pytest.mark.parametrize("presser", ["phone", "dashboard"])
async def test_two_approvers_see_the_request_and_a_press_on_either_decides(
    audit: Audit, presser: str
) -> None:
    screens = {"phone": Screen("phone"), "dashboard": Screen("dashboard")}
    gate = ApprovalGate(audit, 30, approvers=list(screens.values()))
    request = await pending_request(audit)
    asking = asyncio.create_task(gate.request(request))
    for screen in screens.values():
        await asyncio.wait_for(screen.showing.wait(), 5)
    pressed, other = screens[presser], next(s for s in screens.values() if s.name != presser)
    assert pressed.decide is not None and other.decide is not None
    first = await pressed.decide(Decision.APPROVED, presser)
    late = await other.decide(Decision.REJECTED, other.name)
    verdict = await asking
    assert first is not None and late is None  # the other screen's press came too late
    assert verdict.approved and verdict.by == presser
    recorded = await audit.get(request.id)
    assert recorded is not None and recorded["decided_by"] == presser
    for screen in screens.values():
        assert screen.concluded == [(f"{screen.name}:{request.id}", Decision.APPROVED)]
    await gate.close()


@pytest.mark.parametrize(("answer", "decision"), [("y\n", Decision.APPROVED), ("", None)])
async def test_the_terminal_and_another_approver_ask_together(
    audit: Audit, answer: str, decision: Decision | None
) -> None:
    """The terminal asks beside another approver: its `y` decides, or the other's press
    comes first and the terminal's late answer changes nothing."""
    out = io.StringIO()
    # The terminal's answer is read only once it is released, so the order is the test's.
    release = asyncio.Event()

    class HeldInput(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            asyncio.run_coroutine_threadsafe(release.wait(), loop).result()
            return super().readline()

    loop = asyncio.get_running_loop()
    console, dashboard = ConsoleChannel(HeldInput(answer), out), Screen("dashboard")
    gate = ApprovalGate(audit, 30, approvers=[console, dashboard])
    request = await pending_request(audit)
    asking = asyncio.create_task(gate.request(request))
    await asyncio.wait_for(dashboard.showing.wait(), 5)
    if decision is None:  # the dashboard answers first
        await gate.decide(request.id, Decision.REJECTED, "dashboard", reason="not now")
    release.set()
    verdict = await asking
    expected = decision or Decision.REJECTED
    assert verdict.decision is expected
    assert verdict.by == ("console" if decision else "dashboard")
    assert "Approve send_note?" in out.getvalue()
    assert f"[send_note: {verdict.describe()}]" in out.getvalue()
    assert dashboard.concluded == [(f"dashboard:{request.id}", expected)]
    await gate.close()


async def test_an_approver_that_cannot_show_is_left_out(audit: Audit) -> None:
    down, up = Screen("down", broken=True), Screen("up")
    gate = ApprovalGate(audit, 30, approvers=[down, up])
    request = await pending_request(audit)
    asking = asyncio.create_task(gate.request(request))
    await asyncio.wait_for(up.showing.wait(), 5)
    assert up.decide is not None
    await up.decide(Decision.REJECTED, "up")
    assert (await asking).decision is Decision.REJECTED
    assert up.concluded == [(f"up:{request.id}", Decision.REJECTED)] and down.concluded == []
    await gate.close()


async def test_when_no_approver_can_show_the_call_is_rejected(audit: Audit) -> None:
    gate = ApprovalGate(audit, 30, approvers=[Screen("a", broken=True), Screen("b", broken=True)])
    verdict = await gate.request(await pending_request(audit))
    assert verdict.decision is Decision.REJECTED and verdict.by == "system"
    assert verdict.reason == "the owner could not be asked"


async def references_stored(audit: Audit) -> None:
    while not all(row["approval_ref"] for row in await audit.listing(approval_status="pending")):
        await asyncio.sleep(0.01)


async def test_a_restart_concludes_each_approvers_message_with_its_own_reference(
    audit: Audit,
) -> None:
    before = [Screen("phone"), Screen("dashboard")]
    running = ApprovalGate(audit, 30, approvers=before)
    request = await pending_request(audit)
    asking = asyncio.create_task(running.request(request))
    for screen in before:
        await asyncio.wait_for(screen.showing.wait(), 5)
    # A restart finds what the row holds: wait for the references to be stored, not only
    # shown (Python 3.12's quicker `wait_for` returns before the gate has written them).
    await asyncio.wait_for(references_stored(audit), 5)
    after = [Screen("dashboard"), Screen("phone")]  # the next start, in another order
    assert await ApprovalGate(audit, 30, approvers=after).reject_stale() == 1
    for screen in after:
        assert screen.concluded == [(f"{screen.name}:{request.id}", Decision.REJECTED)]
    assert (await asyncio.wait_for(asking, 5)).decision is Decision.REJECTED
    await running.close()


async def test_a_request_recorded_before_approvers_were_named_is_still_concluded(
    audit: Audit,
) -> None:
    request = await pending_request(audit)
    await audit.set_approval_ref(request.id, {"message": f"phone:{request.id}"})
    phone = Screen("phone")
    await ApprovalGate(audit, 30, approvers=[phone]).reject_stale()
    assert phone.concluded == [(f"phone:{request.id}", Decision.REJECTED)]
    row = await audit.get(request.id)
    assert row is not None and json.loads(row["approval_ref"]) == {"message": f"phone:{request.id}"}


class Outbox:
    """A notifier: what the core delivers outside a turn."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    async def send(self, chat_id: str, markdown: str, sources: Sources = NOT_KNOWN) -> None:
        self.sent.append((chat_id, markdown))

    async def edit(self, chat_id: str, message_id: int, markdown: str) -> None:
        self.sent.append((chat_id, markdown))

    async def deliver(self, chat_id: str, artifact: Attachment) -> None:
        self.sent.append((chat_id, f"[{artifact.type} {artifact.name}]"))


async def test_the_core_is_built_with_its_channels(tmp_path: Path) -> None:
    """Approvers and the notifier are given to the lifespan; nothing is attached afterwards."""
    screen, outbox = Screen("dashboard"), Outbox()
    config = load_config(home=tmp_path)
    async with Augure.opened(config, approvers=[screen], notifier=outbox) as opened:
        core = opened.core
        assert core is not None
        assert core.gate.approvers == (screen,)
        assert core.scheduler.notifier is outbox
        assert core.context.scheduler is core.scheduler
