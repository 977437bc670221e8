"""`augure chat`: the same agent on stdin and stdout; also the y/N approver of the CLI."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any, TextIO

from augure.approval.shown import arguments_text
from augure.channels.base import Channel
from augure.common.ports import (
    NOT_KNOWN,
    ApprovalRequest,
    Attachment,
    Decide,
    Decision,
    Sources,
    Verdict,
)
from augure.core.door.chat import ChatDesk

CHAT_ID = "console"
PROMPT = "you> "


class ConsoleChannel:
    """The terminal as a channel. Approval asks at the prompt: `y` or `yes` approves; anything
    else, or end of input, rejects."""

    name = "console"

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.stdin, self.stdout = stdin, stdout
        self._asking = asyncio.Lock()  # one question on screen at a time
        self._tasks: set[asyncio.Task[None]] = set()

    async def send(self, chat_id: str, markdown: str, sources: Sources = NOT_KNOWN) -> None:
        self._write(f"{markdown}\n")  # a terminal shows no link previews

    async def edit(self, chat_id: str, message_id: int, markdown: str) -> None:
        # A terminal cannot change what it printed: the new text follows.
        self._write(f"{markdown}\n")

    async def deliver(self, chat_id: str, artifact: Attachment) -> None:
        self._write(f"[artifact: {artifact.type} {artifact.name}]\n")

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any]:
        task = asyncio.create_task(self._ask(request, decide))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return {"console": True}

    async def _ask(self, request: ApprovalRequest, decide: Decide) -> None:
        async with self._asking:
            arguments = arguments_text(request.arguments)
            self._write(f"\nApprove {request.tool}?\n{arguments}\n[y/N] ")
            answer = (await asyncio.to_thread(self.stdin.readline)).strip().lower()
        await decide(Decision.APPROVED if answer in ("y", "yes") else Decision.REJECTED, "console")

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        self._write(f"[{tool}: {verdict.describe()}]\n")

    def _write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()


async def chat(desk: ChatDesk, console: ConsoleChannel) -> None:
    """The conversation loop; the core was opened with `console` among its approvers."""
    stdin, stdout = console.stdin, console.stdout
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
            await desk.new_conversation(CHAT_ID)
            stdout.write("Started a fresh conversation.\n")
            continue
        reply = await desk.converse(CHAT_ID, text)
        stdout.write(f"augure> {reply.text}\n" if interactive else f"{reply.text}\n")
        for artifact in reply.artifacts:
            await console.deliver(CHAT_ID, artifact)
        stdout.flush()


def terminal_approvers() -> list[ConsoleChannel]:
    """The same gate as in chat for a one-off CLI call: at a terminal the owner answers y/N
    (on stderr, so stdout stays the call's output); from a script there is no one to ask, so
    a call that needs approval is rejected."""
    return [ConsoleChannel(sys.stdin, sys.stderr)] if sys.stdin.isatty() else []


if TYPE_CHECKING:  # mypy proves the contract is met; nothing runs
    _conforms: type[Channel] = ConsoleChannel
