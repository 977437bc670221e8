"""`augure forget --chat ID`, carried out by the running bot once the owner approves it in
Telegram (docs/recall.md#forgetting).

Forgetting a chat cannot be undone, so the terminal alone does not decide it: the command
leaves a request in `settings`, the bot asks the owner with the approval gate (the same
buttons as a tool call), and writes back the outcome the command is waiting for. The bot
forgets with the chat's turns held off (its live history is dropped from memory too). An
approved request is marked so before the wipe: a start after a crash finishes it without
asking again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

from augure.agent.loop import Agent
from augure.approval.gate import ApprovalGate, ApprovalRequest
from augure.common.repeating import Repeating
from augure.store.audit import Audit
from augure.store.state import Store
from augure.store.words import Forgotten, forget_chat, running_work

log = logging.getLogger(__name__)

PREFIX = "recall:forget:"
# The first key after every `recall:forget:…` one (`;` follows `:`): a range on the index.
_END = "recall:forget;"
ACTION = "forget_chat"
POLL_SECONDS = 1.0


def request_key(chat_id: str) -> str:
    return PREFIX + chat_id


async def requests(store: Store) -> list[tuple[str, dict[str, Any]]]:
    rows = await store.db.fetchall(
        "SELECT key, value FROM settings WHERE key >= ? AND key < ?", (PREFIX, _END)
    )
    return [(row["key"].removeprefix(PREFIX), json.loads(row["value"])) for row in rows]


async def write_request(store: Store, chat_id: str, state: dict[str, Any]) -> None:
    await store.db.write(lambda connection: _note(connection, chat_id, state))


def _note(connection: sqlite3.Connection, chat_id: str, state: dict[str, Any]) -> None:
    connection.execute(
        "INSERT INTO settings (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (request_key(chat_id), json.dumps(state)),
    )


async def drop_request(store: Store, chat_id: str) -> None:
    await store.db.execute("DELETE FROM settings WHERE key = ?", (request_key(chat_id),))


class ForgetRequests:
    """Picks up the requests the command leaves, one at a time, while the bot runs."""

    def __init__(
        self, store: Store, audit: Audit, gate: ApprovalGate, agent: Agent, home: Path
    ) -> None:
        self.store = store
        self.audit = audit
        self.gate = gate
        self.agent = agent
        self.home = home
        # A request waits at most a second: the command is waiting for its outcome.
        self.watch = Repeating(
            "forget-requests",
            self.pick_up,
            POLL_SECONDS,
            failure=lambda _: log.exception("could not carry out a forget request"),
        )
        self.start, self.stop = self.watch.start, self.watch.stop

    async def pick_up(self) -> None:
        for chat_id, state in await requests(self.store):
            if state.get("state") == "requested":
                await self.carry_out(chat_id)
            elif state.get("state") in ("approved", "wiped"):  # cut off by a crash: approved
                await self.forget(chat_id, state["invocation"])

    async def carry_out(self, chat_id: str) -> None:
        if await self._busy(chat_id):
            return
        await write_request(self.store, chat_id, {"state": "asking"})
        arguments = {"chat": chat_id}
        invocation = await self.audit.create(
            tool=ACTION,
            origin="cli",
            arguments=arguments,
            chat_id=None,
            turn_id=None,
            target=f"{ACTION}:chat={chat_id}",
            approval_status="pending",
        )
        verdict = await self.gate.request(
            ApprovalRequest(invocation, ACTION, arguments, None, "cli", None)
        )
        if not verdict.approved:
            await write_request(self.store, chat_id, {"state": "rejected"})
            return
        if await self._busy(chat_id):  # started while the owner was deciding
            await self.audit.finished(
                invocation, success=False, output="work of the chat was running", cost_estimate=0
            )
            return
        await write_request(self.store, chat_id, {"state": "approved", "invocation": invocation})
        await self.forget(chat_id, invocation)

    async def _busy(self, chat_id: str) -> bool:
        """Work of the chat still running would write its words after the forget: the
        command says what, and to try again once it has ended."""
        running = await running_work(self.store.db, chat_id)
        if running:
            await write_request(self.store, chat_id, {"state": "busy", "running": running})
        return bool(running)

    async def forget(self, chat_id: str, invocation: str) -> None:
        """Forget the chat; run again after a crash, it finishes what was cut off."""
        await self.audit.started(invocation)
        done: list[Forgotten] = []

        async def wipe(chat: str) -> None:
            def record(connection: sqlite3.Connection, forgotten: Forgotten) -> None:
                wiped = {"state": "wiped", "invocation": invocation, **forgotten.as_json()}
                _note(connection, chat, wiped)

            done.append(await forget_chat(self.store.db, self.home, chat, record))

        await self.agent.new_conversation(chat_id, wipe)
        counts = done[0].as_json()
        said = summary(chat_id, counts)
        await self.audit.finished(invocation, success=True, output=said, cost_estimate=0)
        await write_request(self.store, chat_id, {"state": "done", **counts})


def summary(chat_id: str, counts: dict[str, Any]) -> str:
    """What a forget removed, in a line (the command prints it; the audit record keeps it)."""
    said = (
        f"Forgot chat {chat_id}: {counts['messages']} messages, {counts['archived']} archived "
        f"messages, {counts['calls']} tool calls' arguments and outputs, {counts['tasks']} "
        f"background tasks, {counts['job_replies']} job replies, {counts['outputs']} saved "
        "outputs."
    )
    if counts["kept_jobs"]:
        said += (
            f" Its scheduled jobs are kept ({', '.join(counts['kept_jobs'])}): "
            "`augure jobs remove ID` removes one."
        )
    return said
