"""What a start does before it polls: tell the owner, once, what the last run cut off.

A reply that was being streamed is finalised in place with a note; a reply that was written
but not delivered is delivered; a tool call left running is recorded `interrupted` and named,
and so is background work (once per task, not again per call);
pending approvals are expired with their buttons removed. Each notice is claimed in the
database before it is sent, so repeated crashes never repeat a notice, and nothing that was
waiting for approval runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from augure.approval.gate import ApprovalGate
from augure.common.ports import Notifier
from augure.store.audit import Audit
from augure.store.state import Store
from augure.store.tasks import TaskRow, Tasks

log = logging.getLogger(__name__)

INTERRUPTED_NOTE = "(This reply was interrupted by a restart and is incomplete.)"
INTERRUPTED_UNSEEN = (
    "My reply to your last message was interrupted by a restart. Please send it again if "
    "you still need it."
)


@dataclass
class Recovered:
    replies_delivered: int = 0
    turns_interrupted: int = 0
    calls_interrupted: int = 0
    approvals_expired: int = 0
    tasks_interrupted: int = 0


async def recover(store: Store, audit: Audit, gate: ApprovalGate, notify: Notifier) -> Recovered:
    done = Recovered()
    for turn in await store.open_turns():
        await _recover_turn(store, notify, turn, done)
    told = await _recover_tasks(Tasks(store.db), notify, done)
    for call in await audit.interrupt_running():
        if call["id"] in told:
            continue  # its task's notice names it
        done.calls_interrupted += 1
        text = (
            f"The tool call `{call['tool']}` (id {call['id']}) was interrupted by a restart "
            "and did not finish; it was not run again."
        )
        await _quietly(notify.send(call["chat_id"] or "owner", text))
    done.approvals_expired = await gate.reject_stale()
    if done != Recovered():
        log.info("recovered after an unclean stop: %s", done)
    return done


async def _recover_tasks(tasks: Tasks, notify: Notifier, done: Recovered) -> set[str]:
    """Background tasks left running: each becomes `interrupted` and its chat is told once.
    Returns their calls' invocations, which need no notice of their own."""
    covered: set[str | None] = set()
    for row in await tasks.interrupt_running():
        covered.add(row.invocation)
        if not await tasks.claim_notice(row.id):
            continue  # another start got to it
        if await _quietly(notify.send(row.chat_id, interrupted(row))):
            done.tasks_interrupted += 1
        else:
            await tasks.release_notice(row.id)
    for row in await tasks.unreported():
        if await tasks.claim_notice(row.id) and not await _quietly(
            notify.send(row.chat_id, unreported(row))
        ):
            await tasks.release_notice(row.id)
    return {invocation for invocation in covered if invocation}


def unreported(row: TaskRow) -> str:
    ended = "finished" if row.status == "done" else "failed"
    return (
        f"Background task {row.id} (`{row.tool}`) {ended}, but its report did not reach you "
        f"before the restart. Ask me about task {row.id} to see its result."
    )


def interrupted(row: TaskRow) -> str:
    return (
        f"Background task {row.id} (`{row.tool}`) was interrupted by a restart and did not "
        "finish; it was not run again."
    )


async def _recover_turn(
    store: Store, notify: Notifier, turn: dict[str, Any], done: Recovered
) -> None:
    answered = turn["status"] == "answered"
    if not await store.claim_turn_notice(turn["id"], "done" if answered else "interrupted"):
        return  # another start got to it
    if turn["origin"] != "chat":
        return  # jobs and skills have their own ledger and notices
    chat, preview = turn["chat_id"], turn["preview_message_id"]
    if answered:
        done.replies_delivered += 1
        reply = turn["reply"] or ""
        sent = notify.edit(chat, preview, reply) if preview else notify.send(chat, reply)
    else:
        done.turns_interrupted += 1
        if preview:
            shown = (turn["preview_text"] or "").rstrip()
            sent = notify.edit(chat, preview, f"{shown}\n\n_{INTERRUPTED_NOTE}_")
        else:
            sent = notify.send(chat, INTERRUPTED_UNSEEN)
    if not await _quietly(sent):
        await store.release_turn_notice(turn["id"], turn["status"])


async def _quietly(sending: Any) -> bool:
    try:
        await sending
    except Exception as exc:  # told next start instead; a notice never stops the bot
        log.warning("could not send a recovery notice: %s", exc)
        return False
    return True
