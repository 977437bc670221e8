"""Run a Python snippet in pydantic-monty, with host functions exposed as the `api` module.

The one module that imports pydantic_monty (pinned in pyproject.toml). Monty interprets a
Python subset in a worker subprocess with no files, network, environment or subprocesses;
everything the snippet may reach from outside is a function handed in here.

Each run gets its own pool and worker: cheap, and no state, heap or half-finished
timeout survives from one snippet to the next. Monty's synchronous API is driven from a
dedicated thread, and each host call is sent back to the event loop and awaited there, so the
snippet sees a plain call (no `await`). The asynchronous API was tried first: its Rust threads
can call into Python after the loop is gone, which aborts the interpreter at exit after a
timed-out snippet.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from augure.common.errors import NotDone

if TYPE_CHECKING:  # imported where used, on the first snippet: most bots never run one
    import pydantic_monty as monty

MODULE = "api"
# Monty cannot define exception subclasses; a host failure arrives as this built-in type,
# bound to the name the snippet catches.
TOOL_ERROR_TYPE: monty.ExcType = "RuntimeError"
PRELUDE = f"import {MODULE}\nToolError = {TOOL_ERROR_TYPE}\n"
MEMORY_LIMIT = 256 * 1024 * 1024  # bytes of sandbox heap
PRINT_LIMIT = 50_000  # characters of printed output kept; the executor pages beyond 12,000
VALUE_LIMIT = 20_000  # characters of the last expression's text
# Host-side backstop on top of the sandbox's own time limit, for an operation that does not
# check the clock (rendering a huge nested structure) or a wedged worker.
KILL_GRACE = 5.0


class CallFailed(NotDone):
    """Raised by a host function: the snippet receives it as a catchable `ToolError`."""


@dataclass(frozen=True)
class ApiFunction:
    """A function of the `api` module. `params` order maps positional arguments to names."""

    params: Sequence[str]
    call: Callable[[dict[str, Any]], Awaitable[str]]


@dataclass(frozen=True)
class RunLimits:
    timeout_seconds: float
    max_calls: int
    print_limit: int = PRINT_LIMIT
    memory_bytes: int = MEMORY_LIMIT


@dataclass(frozen=True)
class CallRecord:
    name: str
    arguments: dict[str, Any]
    ok: bool
    detail: str  # the error for a failed call, empty otherwise


@dataclass
class Frame:
    line: int
    function: str | None
    source: str | None


@dataclass
class RunOutcome:
    """What a run produced. `error` is None on success."""

    printed: str = ""
    printed_dropped: int = 0  # characters past `print_limit`, not kept
    value: str | None = None  # text of the last expression, if it had a value
    error: str | None = None  # `Type: message`
    frames: list[Frame] = field(default_factory=list)  # outermost first
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def line(self) -> int | None:
        return self.frames[-1].line if self.frames else None


async def run(code: str, functions: Mapping[str, ApiFunction], limits: RunLimits) -> RunOutcome:
    """Run `code`; never raises for anything the snippet does. Cancellation stops the run."""
    loop = asyncio.get_running_loop()
    runner = _Runner(code, functions, limits, loop)
    done: asyncio.Future[RunOutcome] = loop.create_future()

    def finish(outcome: RunOutcome) -> None:
        if not done.done():
            done.set_result(outcome)

    def target() -> None:
        outcome = runner.drive()
        # The loop may have closed while the snippet ran: then nobody is waiting.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(finish, outcome)

    threading.Thread(target=target, name="codemode", daemon=True).start()
    try:
        return await done
    except asyncio.CancelledError:
        runner.cancel()
        raise


async def check() -> str | None:
    """For `augure doctor`: None when a snippet runs, otherwise what went wrong."""
    try:
        outcome = await run("1 + 1", {}, RunLimits(timeout_seconds=5, max_calls=1))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None if outcome.value == "2" else outcome.error or f"unexpected {outcome.value!r}"


class _Stop(NotDone):
    """Ends a run from the host side (budget spent, caller gone): the snippet cannot catch it."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class _Runner:
    def __init__(
        self,
        code: str,
        functions: Mapping[str, ApiFunction],
        limits: RunLimits,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.code = code
        self.functions = functions
        self.limits = limits
        self.loop = loop
        self.outcome = RunOutcome()
        self._printed: list[str] = []
        self._kept = 0
        self._tool_errors: set[str] = set()
        self._cancelled = threading.Event()
        self._pending: concurrent.futures.Future[str] | None = None

    def cancel(self) -> None:
        self._cancelled.set()
        pending = self._pending
        if pending is not None:
            pending.cancel()

    def drive(self) -> RunOutcome:
        try:
            import pydantic_monty as monty
        except ImportError:  # the `code` extra is not installed
            # The same words as tools/extras.py, which sits above this module.
            self.outcome.error = "code mode needs pydantic-monty: run pip install 'augure[code]'"
            return self.outcome
        try:
            self._drive()
        except monty.MontyError as exc:
            self._fail(exc)
        except _Stop as stop:
            self.outcome.error = str(stop)
            if stop.line is not None:
                source = self.code.splitlines()[stop.line - 1 : stop.line]
                self.outcome.frames = [Frame(stop.line, None, source[0] if source else None)]
        except Exception as exc:  # a bug here must still come back as a result
            self.outcome.error = f"code mode failed: {type(exc).__name__}: {exc}"
        self.outcome.printed = "".join(self._printed)
        return self.outcome

    def _drive(self) -> None:
        import pydantic_monty as monty

        limits = self.limits
        module = monty.ExternalModule({name: _never_called for name in self.functions})
        pool = monty.Monty(
            min_processes=1,
            max_processes=1,
            request_timeout=limits.timeout_seconds + KILL_GRACE,
        )
        with (
            pool,
            pool.checkout(
                script_name="code.py",
                limits={
                    "max_feed_duration_secs": limits.timeout_seconds,
                    "max_memory": limits.memory_bytes,
                    "max_total_sleep_secs": limits.timeout_seconds,
                    # Host round trips (calls, imports, refused OS calls): a loop that keeps
                    # catching refusals cannot spin forever.
                    "max_suspensions": limits.max_calls * 2 + 200,
                },
                external_modules={MODULE: module},
            ) as session,
        ):
            session.feed_run(PRELUDE, print_callback=self._print)
            snapshot = session.feed_start(self.code, print_callback=self._print)
            while not isinstance(snapshot, monty.MontyComplete):
                if self._cancelled.is_set():
                    raise _Stop("the run was cancelled")
                snapshot = self._answer(snapshot)
            self.outcome.value = _text(snapshot.output)

    def _answer(self, snapshot: monty.SyncSnapshot) -> monty.SyncSnapshot:
        import pydantic_monty as monty

        if isinstance(snapshot, monty.NameLookupSnapshot):
            return snapshot.resume()  # no value: NameError, as in Python
        if isinstance(snapshot, monty.FutureSnapshot):
            # Only a host answer could create a future, and every answer here is settled.
            refusal = _raise("RuntimeError", "not awaitable")
            return snapshot.resume({call: refusal for call in snapshot.pending_call_ids})
        if isinstance(snapshot, monty.FunctionSnapshot):
            if snapshot.is_os_function:
                # Imports resolve against the session's modules; every other OS call (files,
                # environment) gets Monty's refusal, since no mount or handler exists.
                name: str = snapshot.function_name
                return snapshot.resume_auto() if name == "import" else snapshot.resume_not_handled()
            return snapshot.resume(self._call(snapshot))
        raise TypeError(f"unexpected snapshot {snapshot!r}")

    def _call(self, snapshot: monty.FunctionSnapshot) -> monty.ExternalResult:
        qualified: str = snapshot.function_name
        prefix = f"{MODULE}."
        name = qualified.removeprefix(prefix)
        function = self.functions.get(name) if qualified.startswith(prefix) else None
        if function is None:
            # An undefined name called as a function arrives here too.
            return _raise("NameError", f"name {qualified!r} is not defined")
        arguments = _bind(name, function.params, snapshot.args, snapshot.kwargs)
        if isinstance(arguments, str):
            return _raise("TypeError", arguments)
        calls = self.outcome.calls
        if len(calls) >= self.limits.max_calls:
            raise _Stop(
                f"code_mode.max_tool_calls ({self.limits.max_calls}) reached: the code tried "
                f"another call, {name}, and was stopped there",
                _line(self.code, snapshot.position.start),
            )
        try:
            output = self._await(lambda: function.call(arguments))
        except CallFailed as failure:
            message = f"{name}: {failure}"
            calls.append(CallRecord(name, arguments, False, str(failure)))
            self._tool_errors.add(message)
            return _raise(TOOL_ERROR_TYPE, message)
        calls.append(CallRecord(name, arguments, True, ""))
        return {"return_value": output}

    def _await(self, start: Callable[[], Awaitable[str]]) -> str:
        async def on_loop() -> str:
            return await start()  # created on the loop, so a cancelled call is never orphaned

        pending = asyncio.run_coroutine_threadsafe(on_loop(), self.loop)
        self._pending = pending
        if self._cancelled.is_set():
            pending.cancel()
        try:
            return pending.result()
        except concurrent.futures.CancelledError:
            raise _Stop("the run was cancelled") from None
        finally:
            self._pending = None

    def _print(self, stream: str, text: str) -> None:
        room = self.limits.print_limit - self._kept
        if room > 0:
            piece = text[:room]
            self._printed.append(piece)
            self._kept += len(piece)
        self.outcome.printed_dropped += max(0, len(text) - max(room, 0))

    def _fail(self, exc: monty.MontyError) -> None:
        import pydantic_monty as monty

        outcome = self.outcome
        over_time = (
            f"TimeoutError: the code ran over code_mode.timeout_seconds "
            f"({self.limits.timeout_seconds:g} s of computation) and was stopped"
        )
        if isinstance(exc, monty.MontyCrashedError):
            outcome.error = over_time if exc.timed_out else f"the sandbox stopped: {exc}"
            return
        if isinstance(exc, monty.MontyRuntimeError | monty.MontySyntaxError):
            outcome.frames = [
                Frame(f.line, f.function_name, f.source_line) for f in exc.traceback()
            ]
            headline = exc.display("type-msg")
            message = exc.display("msg")
            if headline.startswith(f"{TOOL_ERROR_TYPE}: ") and message in self._tool_errors:
                headline = f"ToolError: {message}"
            elif headline.startswith("TimeoutError: feed time limit"):
                headline = over_time
            outcome.error = headline
            return
        outcome.error = f"{type(exc).__name__}: {exc}"


def _bind(
    name: str, params: Sequence[str], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> dict[str, Any] | str:
    """Positional arguments to names, as Python would; an error text when that is impossible."""
    if len(args) > len(params):
        return f"{name}() takes {len(params)} positional arguments but {len(args)} were given"
    bound = dict(zip(params, args, strict=False))
    for key, value in kwargs.items():
        if key in bound:
            return f"{name}() got multiple values for argument {key!r}"
        bound[key] = value
    return bound


def _line(code: str, offset: int) -> int:
    # Monty's positions are byte offsets into the snippet.
    return code.encode()[:offset].count(b"\n") + 1


def _raise(exc_type: monty.ExcType, message: str) -> monty.ExternalExceptionData:
    return {"exc_type": exc_type, "message": message}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else repr(value)
    if len(text) > VALUE_LIMIT:
        return f"{text[:VALUE_LIMIT]}… [{len(text) - VALUE_LIMIT} more characters not shown]"
    return text


def _never_called(*args: Any, **kwargs: Any) -> None:
    # Every call is answered by hand in _call; the module only gives Monty the names.
    raise AssertionError("api functions are answered by the runner")
