"""`augure chat`: the same agent on stdin and stdout."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TextIO

from augure.app import Core
from augure.approval.gate import ApprovalGate, ApprovalRequest, Decision, Verdict
from augure.approval.shown import arguments_text

CHAT_ID = "console"
PROMPT = "you> "


class ConsoleApprover:
    """Asks at the prompt: `y` or `yes` approves; anything else, or end of input, rejects."""

    def __init__(self, gate: ApprovalGate, stdin: TextIO, stdout: TextIO) -> None:
        self.gate, self.stdin, self.stdout = gate, stdin, stdout
        self._asking = asyncio.Lock()  # one question on screen at a time
        self._tasks: set[asyncio.Task[None]] = set()

    async def present(self, request: ApprovalRequest) -> dict[str, Any]:
        task = asyncio.create_task(self._ask(request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return {"console": True}

    async def _ask(self, request: ApprovalRequest) -> None:
        async with self._asking:
            arguments = arguments_text(request.arguments)
            self.stdout.write(f"\nApprove {request.tool}?\n{arguments}\n[y/N] ")
            self.stdout.flush()
            answer = (await asyncio.to_thread(self.stdin.readline)).strip().lower()
        decision = Decision.APPROVED if answer in ("y", "yes") else Decision.REJECTED
        await self.gate.decide(request.id, decision, "console")

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        self.stdout.write(f"[{tool}: {verdict.describe()}]\n")
        self.stdout.flush()


async def chat(core: Core, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> None:
    core.gate.approver = ConsoleApprover(core.gate, stdin, stdout)
    interactive = stdin.isatty()
    if interactive:
        stdout.write("Augure chat. /new starts a fresh conversation, /quit or Ctrl-D leaves.\n")
    while True:
        if interactive:
            stdout.write(PROMPT)
            stdout.flush()
        line = await asyncio.to_thread(stdin.readline)
        if not line:
            break
        text = line.strip()
        if not text:
            continue
        if text in ("/quit", "/exit"):
            break
        if text == "/new":
            await core.agent.new_conversation(CHAT_ID)
            stdout.write("Started a fresh conversation.\n")
            continue
        reply = await core.agent.handle(CHAT_ID, text)
        stdout.write(f"augure> {reply.text}\n" if interactive else f"{reply.text}\n")
        for artifact in reply.artifacts:
            stdout.write(f"[artifact: {artifact.type} {artifact.name}]\n")
        stdout.flush()
