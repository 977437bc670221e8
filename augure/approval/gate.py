"""The approval gate: a pending request is a future, decided by a button, the CLI or a timeout.

Every decision is written with one conditional UPDATE (`pending` → decided), so a button press,
a CLI `augure approve` and the timeout can race and exactly one of them wins.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Sequence
from typing import Any

# What a channel implements and reads lives on the ground floor, where channels reach it
# without importing the gate; named here too for the gate's many callers.
from augure.common.ports import ApprovalRequest as ApprovalRequest
from augure.common.ports import Approver as Approver
from augure.common.ports import Decide as Decide
from augure.common.ports import Decision as Decision
from augure.common.ports import Verdict as Verdict
from augure.store.audit import SESSION, Audit

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5  # how often decisions made by another process (the CLI) are picked up
CLOSE_GRACE_SECONDS = 2.0


class ApprovalGate:
    """Presents each request on every approver; the first decision, from any of them, wins."""

    def __init__(
        self, audit: Audit, timeout_seconds: float, approvers: Sequence[Approver] = ()
    ) -> None:
        self.audit = audit
        self.timeout_seconds = timeout_seconds
        self.approvers = tuple(approvers)
        self._pending: dict[str, asyncio.Future[Verdict]] = {}
        self._offered_in_chat: set[str] = set()  # pending requests showing `Allow in this chat`
        self._watcher: asyncio.Task[None] | None = None
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def request(self, request: ApprovalRequest) -> Verdict:
        self._in_flight += 1
        self._idle.clear()
        try:
            return await self._request(request)
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()

    async def _request(self, request: ApprovalRequest) -> Verdict:
        if not self.approvers:
            verdict = Verdict(Decision.REJECTED, "system", "no one is there to approve it")
            await self.audit.decide(request.id, verdict.decision, verdict.by, verdict.reason)
            return verdict
        future: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
        self._pending[request.id] = future
        if request.in_chat:
            self._offered_in_chat.add(request.id)
        self._ensure_watcher()
        shown: dict[Approver, dict[str, Any] | None] = {}
        # Shielded: a call cancelled while its request is being sent still learns where the
        # request went, so its buttons can be taken away.
        presenting = asyncio.ensure_future(self._present(request))
        try:
            shown = await asyncio.shield(presenting)
            # Each approver's reference by its name: a later start concludes every message.
            refs = {approver.name: ref for approver, ref in shown.items()}
            await self.audit.set_approval_ref(request.id, {"shown": refs})
            verdict = await asyncio.wait_for(asyncio.shield(future), self.timeout_seconds)
        except TimeoutError:
            verdict = Verdict(Decision.TIMED_OUT, "timeout")
            if not await self.audit.decide(request.id, verdict.decision, verdict.by):
                verdict = await self._recorded(request.id)  # decided at the last moment
        except Exception as exc:  # the owner could not be asked: that is a no
            log.warning("could not ask for approval of %s: %s", request.tool, exc)
            verdict = Verdict(Decision.REJECTED, "system", "the owner could not be asked")
            await self.audit.decide(request.id, verdict.decision, verdict.by, verdict.reason)
        except asyncio.CancelledError:
            # The call itself was cancelled (a background task): settle the request and take
            # its buttons away, so a late press finds it decided.
            verdict = Verdict(Decision.REJECTED, "cancelled", "cancelled")
            with contextlib.suppress(Exception):
                await self.audit.decide(request.id, verdict.decision, verdict.by, verdict.reason)
                shown = shown or await presenting
                await asyncio.gather(
                    *(self._conclude(a, ref, request.tool, verdict) for a, ref in shown.items())
                )
            raise
        finally:
            self._pending.pop(request.id, None)
            self._offered_in_chat.discard(request.id)
        await asyncio.gather(
            *(self._conclude(a, ref, request.tool, verdict) for a, ref in shown.items())
        )
        return verdict

    async def _present(self, request: ApprovalRequest) -> dict[Approver, dict[str, Any] | None]:
        """Show the request on every approver; one that fails is left out, all failing raises."""

        async def decide(
            decision: Decision,
            by: str,
            *,
            reason: str | None = None,
            always: bool = False,
            in_chat: bool = False,
        ) -> Verdict | None:
            return await self.decide(
                request.id, decision, by, reason=reason, always=always, in_chat=in_chat
            )

        results = await asyncio.gather(
            *(approver.present(request, decide) for approver in self.approvers),
            return_exceptions=True,
        )
        shown: dict[Approver, dict[str, Any] | None] = {}
        for approver, result in zip(self.approvers, results, strict=True):
            if isinstance(result, BaseException):
                log.warning("%s could not show the approval request: %s", approver.name, result)
            else:
                shown[approver] = result
        if not shown:
            raise LookupError("no approver could show the request")
        return shown

    async def _conclude(
        self, approver: Approver, ref: dict[str, Any] | None, tool: str, verdict: Verdict
    ) -> None:
        try:
            await approver.conclude(ref, tool, verdict)
        except Exception as exc:
            log.warning("could not update the approval message on %s: %s", approver.name, exc)

    async def decide(
        self,
        invocation_id: str,
        decision: Decision,
        by: str,
        *,
        reason: str | None = None,
        always: bool = False,
        in_chat: bool = False,
    ) -> Verdict | None:
        """Decide a pending request. None if it was decided before (or never existed)."""
        # Audited `session` only where the button was offered: only there does it grant.
        offered = in_chat and invocation_id in self._offered_in_chat
        recorded = SESSION if offered and decision is Decision.APPROVED else decision
        if not await self.audit.decide(invocation_id, recorded, by, reason):
            return None
        verdict = Verdict(decision, by, reason, always, in_chat)
        future = self._pending.get(invocation_id)
        if future is not None and not future.done():
            future.set_result(verdict)
        return verdict

    async def reject_stale(self) -> int:
        """At start: requests left pending by a previous run are rejected; none will run."""
        stale = await self.audit.listing(approval_status="pending", limit=1000)
        for row in stale:
            verdict = Verdict(Decision.REJECTED, "restart", "the assistant restarted")
            if await self.audit.decide(row["id"], verdict.decision, verdict.by, verdict.reason):
                stored = json.loads(row["approval_ref"]) if row["approval_ref"] else None
                for approver, ref in self._refs(stored).items():
                    if ref is not None:
                        await self._conclude(approver, ref, row["tool"], verdict)
        return len(stale)

    def _refs(self, stored: Any) -> dict[Approver, dict[str, Any] | None]:
        """Each approver's reference from a stored row; a row written before approvers were
        named holds the one approver's reference itself."""
        if not isinstance(stored, dict):
            return {}
        if "shown" not in stored:
            return {approver: stored for approver in self.approvers}
        return {a: stored["shown"][a.name] for a in self.approvers if a.name in stored["shown"]}

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        # docs/reference/durability.md#a-clean-stop: on stop, pending approvals are rejected
        # (recorded now, not left to a restart).
        verdict = Verdict(Decision.REJECTED, "shutdown", "the assistant stopped")
        for invocation_id, future in list(self._pending.items()):
            with contextlib.suppress(Exception):
                await self.audit.decide(invocation_id, verdict.decision, verdict.by, verdict.reason)
            if not future.done():
                future.set_result(verdict)
        # Let the waiting requests edit their messages ("Rejected") before the channel goes.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), CLOSE_GRACE_SECONDS)

    def _ensure_watcher(self) -> None:
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        """Pick up decisions written by another process while requests are pending."""
        while self._pending:
            await asyncio.sleep(POLL_SECONDS)
            try:
                rows = await self.audit.decisions(list(self._pending))
            except Exception as exc:
                log.warning("could not read approval decisions: %s", exc)
                continue
            for row in rows:
                future = self._pending.get(row["id"])
                if future is not None and not future.done():
                    future.set_result(_verdict(row))

    async def _recorded(self, invocation_id: str) -> Verdict:
        row = await self.audit.get(invocation_id)
        assert row is not None
        return _verdict(row)


def _verdict(row: dict[str, Any]) -> Verdict:
    status, by = row["approval_status"], row["decided_by"] or "?"
    if status == SESSION:
        return Verdict(Decision.APPROVED, by, row["reason"], in_chat=True)
    return Verdict(Decision(status), by, row["reason"])
