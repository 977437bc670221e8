"""The bubblewrap sandbox for real: escapes that must fail, limits that must hold, and
`sandbox_exec` / `opencode` through the real bot with approval buttons."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from augure.common.caller import Caller
from augure.config.execution import SandboxConfig
from augure.config.settings import Config, load_config
from augure.memory.store import MemoryStore
from augure.sandbox import BwrapSandbox, probe, sandbox_problem, workspace_for
from augure.sandbox import workspace_name as folder
from augure.sandbox.base import NPROC
from augure.tools.base import RunContext, ToolResult
from augure.tools.opencode import opencode
from augure.tools.registry import ToolRegistry
from augure.tools.sandbox_exec import sandbox_exec
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import (
    REJECTED,
    approval_message,
    buttons,
    final_reply,
    tool_results,
)
from tests.fakes.openai import text, tool
from tests.system import outward_address

pytestmark = [pytest.mark.system_package("bubblewrap"), pytest.mark.tools(sandbox_exec, opencode)]

SECRET = "s3cr3t-value-that-must-not-leak-7f3a"


def make_config(home: Path, **sandbox: Any) -> Config:
    config = load_config(home=home)
    config.sandbox = SandboxConfig(**({"timeout_seconds": 10, "memory_mb": 256} | sandbox))
    return config


def context(config: Config, chat: str | None = "chat-a") -> RunContext:
    # The sandbox tools touch neither memory nor the database.
    return RunContext(
        config,
        MemoryStore(config.home / "memory"),
        cast(Any, None),
        Caller.of("chat", chat_id=chat),
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / "augure.toml").write_text(f'[llm]\napi_key = "{SECRET}"\n')
    (path / "state.db").write_text(f"database {SECRET}")
    return path


@pytest.fixture
def run(home: Path) -> Callable[..., Any]:
    async def call(command: str, chat: str | None = "chat-a", **sandbox: Any) -> ToolResult:
        timeout = sandbox.pop("timeout", None)
        config = make_config(home, **sandbox)
        args: dict[str, Any] = {"command": command}
        if timeout is not None:
            args["timeout"] = timeout
        return await sandbox_exec.run_ungated(args, context(config, chat))

    return call


def processes_with(marker: bytes) -> list[int]:
    """Host pids whose command line contains `marker`."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"{entry.path}/cmdline", "rb") as file:
                    if marker in file.read():
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


def marker() -> str:
    """A token unique to one command: forked shells and Pythons keep it in their cmdline,
    so leftovers are found without mistaking other sandboxes on the machine for ours."""
    return f"augure-probe-{uuid.uuid4().hex}"


async def gone(probe: Callable[[], list[int]], seconds: float = 5.0) -> list[int]:
    """What `probe` still finds once the kernel has had `seconds` to tear a namespace down."""
    deadline = time.monotonic() + seconds
    while (left := probe()) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return left


def sandbox_user_tasks() -> list[int]:
    uid = BwrapSandbox(SandboxConfig()).uid
    return [int(e.name) for e in os.scandir("/proc") if e.name.isdigit() and _uid(e.path) == uid]


def _uid(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


async def settle() -> None:
    """Wait for dead sandboxes to be reaped: their zombies count against the sandbox user's
    process limit until the host's init collects them (slowly, in some containers)."""
    await gone(sandbox_user_tasks, seconds=10)


class TestVulnerabilities:
    """Each attempt must fail inside the sandbox and leave nothing behind on the host."""

    async def test_vulnerability_read_etc_shadow(self, run: Any) -> None:
        result = await run("cat /etc/shadow; ls /etc")
        assert "No such file" in result.output
        assert "shadow" not in result.output.split("stderr:")[0]
        assert "root:" not in result.output
        assert "passwd" in result.output  # the listing ran: the absence is real

    async def test_vulnerability_read_augure_home(self, run: Any, home: Path) -> None:
        result = await run(
            f"cat {home}/augure.toml {home}/state.db; ls /workspace/.. /workspace/../..; "
            "find / -name augure.toml -o -name state.db 2>/dev/null; echo searched"
        )
        assert "searched" in result.output
        assert SECRET not in result.output
        assert "No such file" in result.output
        assert "augure.toml" not in result.output.split("stderr:")[0]

    async def test_vulnerability_parent_environment(
        self, run: Any, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("AUGURE_TEST_SECRET", SECRET)
        result = await run(
            "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; echo done"
        )
        assert "PATH=/usr/local/bin:/usr/bin:/bin" in result.output  # env did print
        assert "done" in result.output
        assert SECRET not in result.output and "AUGURE_TEST_SECRET" not in result.output

    @pytest.mark.system_package("slirp4netns")
    async def test_vulnerability_network(self, run: Any) -> None:
        outward = outward_address()
        connections: list[str] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            connections.append("hit")
            writer.write(f"banner {SECRET}\n".encode())
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, outward, 0)
        port = server.sockets[0].getsockname()[1]
        probe = (
            "python3 -c \"import socket; s = socket.create_connection(('"
            f"{outward}', {port}), 3); print(s.recv(100).decode())\""
        )
        async with server:
            blocked = await run(probe)
            assert "Connection refused" in blocked.output or "unreachable" in blocked.output
            assert SECRET not in blocked.output and connections == []
            # The same probe with network on reaches the server: the test can tell. (The
            # host's loopback stays out of reach even then: test_vulnerability_sandbox_network.)
            allowed = await run(probe, network=True)
            assert f"banner {SECRET}" in allowed.output and connections == ["hit"]

    async def test_vulnerability_write_outside_workspace(self, run: Any, home: Path) -> None:
        result = await run(
            "for p in /usr/pwned /etc/pwned /pwned /usr/lib/pwned /bin/pwned; do "
            "echo x > $p || echo refused $p; done; echo ok > /workspace/inside; cat inside"
        )
        assert result.output.count("Read-only file system") == 5
        assert result.output.count("refused /") == 5
        for path in ("/usr/pwned", "/etc/pwned", "/pwned", "/usr/lib/pwned"):
            assert not os.path.exists(path)
        assert (workspace_for(home, "chat-a") / "inside").read_text() == "ok\n"

    async def test_vulnerability_fork_bomb(self, run: Any) -> None:
        bomb = marker()
        started = time.monotonic()
        result = await run(f": {bomb}; f() {{ f | f & }}; f; sleep 2; echo survived", timeout=5)
        assert time.monotonic() - started < 15
        assert "Cannot fork" in result.output
        assert await gone(lambda: processes_with(bomb.encode())) == []
        await settle()
        # Counted: processes the sandboxed user gets before fork is refused.
        counter = marker()
        counted = await run(
            f'python3 -c "\nimport os, time  # {counter}\nn = 0\ntry:\n    while n < 1000:\n'
            "        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n"
            "        n += 1\nexcept OSError as e:\n    print('refused', e.errno)\nprint(n)\""
        )
        refused, forked = counted.output.split("stdout:\n")[1].split("\n")[:2]
        assert refused == "refused 11" and 0 < int(forked) < NPROC
        assert await gone(lambda: processes_with(counter.encode())) == []
        await settle()

    async def test_vulnerability_inherited_descriptors(self, run: Any) -> None:
        # An open directory from outside would be a way out (openat(fd, "..")).
        result = await run("ls /proc/$$/fd; readlink /proc/$$/fd/*")
        listed = result.output.split("stdout:\n")[1].split("\n")
        assert listed[:3] == ["0", "1", "2"] and listed[3] == "/dev/null"
        assert all(line.startswith(("pipe:", "/dev/null")) for line in listed[3:6])
        assert len(listed) == 6

    async def test_vulnerability_memory_hog(self, run: Any) -> None:
        hog = await run("python3 -c 'b = bytearray(1024 * 1024 * 1024); print(len(b))'")
        assert not hog.success and "MemoryError" in hog.output
        fits = await run("python3 -c 'b = bytearray(64 * 1024 * 1024); print(len(b))'")
        assert fits.success and "67108864" in fits.output

    async def test_vulnerability_infinite_loop_tree_is_killed(self, run: Any) -> None:
        loop, seconds = marker(), str(100_000 + uuid.uuid4().int % 800_000)
        started = time.monotonic()
        result = await run(
            f": {loop}; sleep {seconds} & nohup setsid sleep {seconds} >/dev/null 2>&1 & "
            f"sh -c 'while :; do :; done; : {loop}' & while :; do :; done",
            timeout=1,
        )
        elapsed = time.monotonic() - started
        assert "killed: did not finish within 1 s" in result.output and not result.success
        assert elapsed < 5
        assert await gone(lambda: processes_with(f"sleep\x00{seconds}\x00".encode())) == []
        assert await gone(lambda: processes_with(loop.encode())) == []

    async def test_cancelled_call_kills_the_tree(self, run: Any) -> None:
        # The bot stopping (or the executor's own timeout) cancels the call mid-run.
        tag = marker()
        call = asyncio.create_task(run(f": {tag}; sleep 60 & while :; do :; done", timeout=60))
        await asyncio.sleep(0.5)
        assert processes_with(tag.encode())
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await gone(lambda: processes_with(tag.encode())) == []

    async def test_vulnerability_odd_chat_ids_stay_in_their_folder(
        self, run: Any, home: Path
    ) -> None:
        odd = ["..", "../..", "../escape", "/etc", "a/../../b", ".", "", "é", "x" * 300, "a\x00b"]
        names = {folder(chat) for chat in odd}
        assert len(names) == len(odd)  # distinct ids, distinct folders
        for chat in odd:
            result = await run("echo mine > owned.txt; pwd", chat=chat)
            assert result.success, result.output
            expected = home / "workspaces" / folder(chat)
            assert (expected / "owned.txt").read_text() == "mine\n"
        assert sorted(p.name for p in home.iterdir()) == ["augure.toml", "state.db", "workspaces"]
        workspaces = sorted(p.name for p in (home / "workspaces").iterdir())
        assert workspaces == sorted(names)
        assert all("/" not in n and n not in (".", "..") for n in names)
        assert folder("a_b") == "a_b"
        assert len({folder("a/b"), folder("a_b"), folder("a.b")}) == 3

    async def test_workspace_persists_per_chat_and_is_private(self, run: Any) -> None:
        await run("echo remembered > notes.txt; mkdir -p src && echo 1 > src/a.py", chat="one")
        again = await run("cat notes.txt src/a.py", chat="one")
        assert again.success and "remembered" in again.output and "1" in again.output
        other = await run("ls -A /workspace; cat notes.txt; ls /workspace/..", chat="two")
        assert "remembered" not in other.output and "No such file" in other.output
        assert "one" not in other.output.split("stderr:")[0]

    async def test_output_is_capped_and_says_so(self, run: Any) -> None:
        result = await run("yes 0123456789 | head -c 300000; echo err >&2")
        assert result.success
        assert "[output cut: only the first 64 KiB" in result.output
        assert "stderr:\nerr" in result.output
        assert len(result.output) < 70_000

    async def test_planted_symlink_does_not_reach_the_host(self, run: Any, home: Path) -> None:
        await run(f"ln -s {home}/state.db leak; ln -s /etc/hostname host", chat="links")
        result = await run("cat leak; cat host; echo end", chat="links")
        assert SECRET not in result.output and "end" in result.output
        # The bot prepares the folder again without following what was planted in it.
        workspace_for(home, "links", BwrapSandbox(SandboxConfig()))
        assert (home / "state.db").stat().st_uid == os.getuid()


async def test_doctor_probe(home: Path) -> None:
    assert await probe(make_config(home)) == (True, "bwrap runs commands")
    assert await probe(make_config(home, backend="none")) == (
        False,
        "set [sandbox] backend to bwrap or docker",
    )


async def test_not_configured_backend_none(home: Path) -> None:
    config = make_config(home, backend="none")
    result = await sandbox_exec.run_ungated({"command": "true"}, context(config))
    assert result.output == "Error: [NOT CONFIGURED] set [sandbox] backend to bwrap or docker"
    registry = ToolRegistry(config)
    registry.register(sandbox_exec)
    assert registry.description(sandbox_exec).endswith(
        "[NOT CONFIGURED] set [sandbox] backend to bwrap or docker"
    )
    assert not (home / "workspaces").exists()


async def test_not_configured_without_bubblewrap(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    for name in ("setpriv", "prlimit"):
        (bare / name).symlink_to(f"/usr/bin/{name}")
    monkeypatch.setenv("PATH", str(bare))
    config = make_config(home)
    assert sandbox_problem(config) == "install bubblewrap"
    result = await sandbox_exec.run_ungated({"command": "true"}, context(config))
    assert result.output == "Error: [NOT CONFIGURED] install bubblewrap"


async def test_timeout_is_capped_by_the_config(run: Any) -> None:
    started = time.monotonic()
    result = await run("sleep 30", timeout=600, timeout_seconds=1)
    assert "did not finish within 1 s" in result.output
    assert time.monotonic() - started < 5


# Through the real bot: the approval buttons decide whether anything runs at all.


async def press(bot: Bot, label: str) -> dict[str, Any]:
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)[label])
    return message


def bot_workspace(bot: Bot) -> Path:
    return bot.home / "workspaces" / folder(str(OWNER))


async def test_bot_runs_sandbox_exec_after_approve(bot: Bot) -> None:
    command = "echo made by $(id -un) > note.txt; cat note.txt"
    bot.llm.script(tool("sandbox_exec", {"command": command}), text("Ran it."))
    bot.telegram.inject_message(OWNER, "make a note in the sandbox")
    message = await press(bot, "Approve")
    assert "sandbox_exec" in message["text"] and "note.txt" in message["text"]
    assert set(buttons(message)) == {"Approve", "Reject", "Always allow", "Allow in this chat"}
    await final_reply(bot, "Ran it.")
    assert tool_results(bot.llm) == ["exit code: 0\nstdout:\nmade by nobody"]
    assert (bot_workspace(bot) / "note.txt").read_text() == "made by nobody\n"


async def test_bot_reject_never_runs(bot: Bot) -> None:
    bot.llm.script(tool("sandbox_exec", {"command": "touch ran.txt"}), text("No."))
    bot.telegram.inject_message(OWNER, "touch a file")
    await press(bot, "Reject")
    await final_reply(bot, "No.")
    assert tool_results(bot.llm) == [REJECTED]
    assert not (bot_workspace(bot) / "ran.txt").exists()


FAKE_AGENT = """#!/usr/bin/python3
import os, sys
task = sys.argv[-1]
with open("hello.py", "w") as f:
    f.write("print('hello from the agent')\\n")
print(f"args={sys.argv[1:-1]} cwd={os.getcwd()} task={task}")
print("Wrote hello.py (1 file changed)")
"""


@pytest.fixture
async def agent_bot(bot: Bot, tmp_path: Path) -> AsyncIterator[Bot]:
    agent = tmp_path / "agent-bin" / "fake-opencode"
    agent.parent.mkdir()
    agent.write_text(FAKE_AGENT)
    agent.chmod(0o755)
    await bot.stop()
    (bot.home / "augure.toml").write_text(
        f'[tools.opencode]\ncommand = "{agent}"\nargs = ["run", "--quiet"]\n'
    )
    await bot.start()
    yield bot


async def test_bot_runs_opencode_in_the_workspace(agent_bot: Bot) -> None:
    bot = agent_bot
    task = "write hello.py that prints a greeting"
    bot.llm.script(tool("opencode", {"task": task}), text("The agent is done."))
    bot.telegram.inject_message(OWNER, "get the coding agent to write hello.py")
    message = await press(bot, "Approve")
    assert set(buttons(message)) == {"Approve", "Reject"}  # a coding agent: always ask
    await final_reply(bot, "The agent is done.")
    (result,) = tool_results(bot.llm)
    assert f"args=['run', '--quiet'] cwd=/workspace task={task}" in result
    assert "Wrote hello.py" in result
    written = bot_workspace(bot) / "hello.py"
    assert written.read_text() == "print('hello from the agent')\n"
    assert bot.core is not None
    rerun = await sandbox_exec.run_ungated(
        {"command": "python3 hello.py"}, context(bot.core.config, str(OWNER))
    )
    assert "hello from the agent" in rerun.output


async def test_opencode_not_configured(home: Path) -> None:
    result = await opencode.run_ungated({"task": "anything"}, context(make_config(home)))
    assert result.output == "Error: [NOT CONFIGURED] set [tools.opencode] command"


def test_rules_cover_the_exact_command_only() -> None:
    def validated(command: str) -> Any:
        return sandbox_exec.arguments_model.model_validate({"command": command})

    plain = validated("  git status  ")
    assert sandbox_exec.approval.target_for(plain) == "sandbox_exec:argv=git status"
    assert sandbox_exec.approval.rule_for(plain) == "sandbox_exec:argv=git status"
    # No escape exists for `*` or `?` in a rule: such a command gets no "Always allow".
    assert sandbox_exec.approval.rule_for(validated("rm -f *.log")) is None
    fix_it = opencode.arguments_model.model_validate({"task": "fix it"})
    assert opencode.approval.rule_for(fix_it) is None
