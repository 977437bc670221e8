"""`augure chat`: the same agent on stdin and stdout."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from augure.app import Core

CHAT_ID = "console"
PROMPT = "you> "


async def chat(core: Core, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> None:
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
