"""What a start says about background tasks: once each, and again only if it failed to."""

from __future__ import annotations

from pathlib import Path

from augure.approval.gate import ApprovalGate
from augure.core.recovery import recover
from augure.store.audit import Audit
from augure.store.state import Store
from augure.store.tasks import Tasks
from tests.unit.test_recovery import Notices


async def crashed(tmp_path: Path) -> tuple[Store, dict[str, str]]:
    """A state.db as a kill -9 leaves it: tasks in every state, one call still running."""
    store = await Store.open(tmp_path / "state.db")
    tasks, audit = Tasks(store.db), Audit(store)
    ids = {}
    for name in ("running", "reported", "unreported", "failed", "cancelled"):
        ids[name] = await tasks.create("5", "sandbox_exec", {"command": "make"})
    call = await audit.create(
        tool="sandbox_exec", origin="background", arguments={}, chat_id="5", turn_id=None,
        target=None, approval_status="not_required",
    )  # fmt: skip
    await audit.started(call)
    await tasks.attach(ids["running"], call)
    await tasks.finish(ids["reported"], "done", "ok")
    await tasks.claim_notice(ids["reported"])
    await tasks.finish(ids["unreported"], "done", "ok")
    await tasks.finish(ids["failed"], "failed", "Error: exit code: 2")
    await tasks.finish(ids["cancelled"], "cancelled", "Cancelled by the owner.")
    return store, ids


async def test_each_task_cut_off_or_unreported_is_told_once(tmp_path: Path) -> None:
    store, ids = await crashed(tmp_path)
    audit = Audit(store)
    gate = ApprovalGate(audit, 5)
    try:
        notices = Notices()
        done = await recover(store, audit, gate, notices)
        said = [text for _, text in notices.sent]
        assert done.tasks_interrupted == 1 and done.calls_interrupted == 0
        assert said == [
            f"Background task {ids['running']} (`sandbox_exec`) was interrupted by a restart "
            "and did not finish; it was not run again.",
            f"Background task {ids['unreported']} (`sandbox_exec`) finished, but its report "
            f"did not reach you before the restart. Ask me about task {ids['unreported']} to "
            "see its result.",
            f"Background task {ids['failed']} (`sandbox_exec`) failed, but its report did not "
            f"reach you before the restart. Ask me about task {ids['failed']} to see its result.",
        ]
        row = await Tasks(store.db).get(ids["running"])
        assert row is not None and row.status == "interrupted"
        invocation = await audit.get(row.invocation or "")
        assert invocation is not None and invocation["status"] == "interrupted"

        again = Notices()
        await recover(store, audit, gate, again)
        assert again.sent == []
    finally:
        await store.close()


async def test_a_notice_that_could_not_be_sent_is_tried_at_the_next_start(
    tmp_path: Path,
) -> None:
    store, ids = await crashed(tmp_path)
    audit = Audit(store)
    gate = ApprovalGate(audit, 5)
    try:
        await recover(store, audit, gate, Notices(fail=True))
        later = Notices()
        await recover(store, audit, gate, later)
        told = " ".join(text for _, text in later.sent)
        for name in ("running", "unreported", "failed"):
            assert f"Background task {ids[name]} " in told
        assert ids["reported"] not in told and ids["cancelled"] not in told
    finally:
        await store.close()
