"""A stdio server's pipes, read with a bound: the SDK's own stdio client keeps a line until
its end, however long, so one huge answer swelled the bot (docs/performance.md).

Here each stdout line is kept up to `MESSAGE_LIMIT` bytes; a longer one is dropped as it
arrives and its request answered with an error naming the limit. Stderr lines go, redacted,
to the server's rotated log file."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import ByteReceiveStream, Process

from augure.mcp.limits import MESSAGE_LIMIT, too_large

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

# A log line longer than this is noted, not written (a secret cut in two would not match).
STDERR_LINE_LIMIT = 64 * 1024
# What is kept of a dropped answer to find the request it answers.
HEAD_BYTES, TAIL_BYTES = 4096, 512
# The server's time to exit once its stdin is closed, then after SIGTERM (as the SDK does).
EXIT_SECONDS = 2.0
_ID = rb'(-?\d+|"(?:[^"\\]|\\.){0,200}")'
# Where JSON-RPC answers put their id: first (`{"jsonrpc":"2.0","id":7,...`, the Python SDK)
# or last (`...,"jsonrpc":"2.0","id":7}`, the TypeScript SDK).
ID_FIRST = re.compile(rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID)
ID_LAST = re.compile(rb'"id"\s*:\s*' + _ID + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*\Z')

StderrSink = Callable[[str], None]
# Told the server's exit code when it exits on its own: the reason a call names when it is down.
ExitSink = Callable[[int], None]


@dataclass
class Overflow:
    """A line over the limit: its first and last bytes and its length, never all of it."""

    head: bytes
    tail: bytes
    size: int

    def request_id(self) -> int | str | None:
        match = ID_FIRST.search(self.head) or ID_LAST.search(self.tail)
        if match is None:
            return None
        value = match.group(1)
        return int(value) if value[:1] != b'"' else value[1:-1].decode("utf-8", "replace")


async def lines(stream: ByteReceiveStream, limit: int) -> AsyncIterator[bytes | Overflow]:
    """Each newline-ended line of `stream`, or an `Overflow` for one over `limit` bytes; at
    most `limit` bytes and one chunk are held at any time."""
    buffer = bytearray()
    overflow: Overflow | None = None
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        async for chunk in stream:
            start = 0
            while start <= len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if overflow is not None:
                    overflow.size += len(piece)
                    overflow.tail = (overflow.tail + piece)[-TAIL_BYTES:]
                else:
                    buffer += piece
                    if len(buffer) > limit:
                        overflow = Overflow(
                            bytes(buffer[:HEAD_BYTES]), bytes(buffer[-TAIL_BYTES:]), len(buffer)
                        )
                        buffer = bytearray()
                if end < 0:
                    break
                yield overflow if overflow is not None else bytes(buffer)
                buffer, overflow = bytearray(), None
                start = end + 1
    if buffer:
        yield bytes(buffer)


class _Pipes:
    """The three pipes of a running server and the two streams its session talks through."""

    def __init__(self, process: Process, stderr: StderrSink | None, exited: ExitSink | None):
        from mcp.shared.message import SessionMessage

        self.process, self.stderr, self.exited = process, stderr, exited
        self.inbound_writer, self.inbound = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](0)
        self.outbound, self.outbound_reader = anyio.create_memory_object_stream[SessionMessage](0)
        # Set once the bot stops the server: an exit it causes is no reason the server gave.
        self.stopping = anyio.Event()

    async def ended(self) -> None:
        """Its pipes closed, most likely with it: the code it exited with is told before the
        session learns the connection closed."""
        code = await _exit_code(self.process)
        if code is not None and self.exited is not None and not self.stopping.is_set():
            self.exited(code)

    async def read_stdout(self) -> None:
        assert self.process.stdout is not None
        async with self.inbound_writer:
            async for line in lines(self.process.stdout, MESSAGE_LIMIT):
                message = _answer(line)
                if message is None:
                    return  # an answer to no known request: the connection is dropped
                try:
                    await self.inbound_writer.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
            await self.ended()

    async def write_stdin(self) -> None:
        assert self.process.stdin is not None
        try:
            async with self.outbound_reader:
                async for message in self.outbound_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await self.process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await self.ended()
            await self.inbound_writer.aclose()  # the calls waiting for an answer learn at once

    async def copy_stderr(self) -> None:
        assert self.process.stderr is not None and self.stderr is not None
        async for line in lines(self.process.stderr, STDERR_LINE_LIMIT):
            if isinstance(line, Overflow):
                self.stderr(f"(a line of {line.size} bytes is left out)")
            else:
                self.stderr(line.decode("utf-8", "replace").rstrip("\r"))

    async def close(self) -> None:
        self.stopping.set()
        await self.outbound.aclose()
        await _stop(self.process)
        await self.inbound.aclose()


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    env: dict[str, str],
    stderr: StderrSink | None,
    exited: ExitSink | None = None,
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
]:
    """The server's process and the two streams a `ClientSession` talks through. Without a
    `stderr` sink the server's stderr is the bot's."""
    from mcp.client.stdio import get_default_environment

    process = await anyio.open_process(
        [command, *args],
        env=get_default_environment() | env,
        stderr=subprocess.PIPE if stderr is not None else None,
        start_new_session=True,  # its own group: stopping it stops what it started
    )
    pipes = _Pipes(process, stderr, exited)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(pipes.read_stdout)
        tasks.start_soon(pipes.write_stdin)
        if stderr is not None:
            tasks.start_soon(pipes.copy_stderr)
        try:
            yield pipes.inbound, pipes.outbound
        finally:
            # Stopping must end even when the caller is cancelled, or the process would leak.
            with anyio.CancelScope(shield=True):
                await pipes.close()
            tasks.cancel_scope.cancel()


def _answer(line: bytes | Overflow) -> SessionMessage | Exception | None:
    """The message a line carries; for a line over the limit, an error answering its
    request, or None when it names none."""
    import mcp_types
    from mcp.shared.message import SessionMessage

    if isinstance(line, Overflow):
        request = line.request_id()
        log.warning(
            "MCP server sent a message of over %d bytes (request %s); dropped",
            MESSAGE_LIMIT,
            request,
        )
        if request is None:
            return None
        error = mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=too_large())
        return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request, error=error))
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc  # the session reports it, as with the SDK's own transport


async def _exit_code(process: Process) -> int | None:
    """The code of a process that exits within EXIT_SECONDS; None if it is still running."""
    # Polled, not waited: `wait` also waits for the pipes, which a child may still hold.
    with anyio.move_on_after(EXIT_SECONDS):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode


async def _stop(process: Process) -> None:
    """Close its stdin, wait, then SIGTERM and SIGKILL its whole group."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        assert process.stdin is not None
        await process.stdin.aclose()
    for stop in (None, signal.SIGTERM, signal.SIGKILL):
        if stop is not None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, stop)
        if await _exit_code(process) is not None:
            break
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await pipe.aclose()
