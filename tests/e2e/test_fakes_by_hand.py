"""The fakes a person runs (docs/development.md): both from the command line on fixed ports,
a real `augure run` pointed at them, messages typed on the fake Telegram's stdin."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.conftest import OWNER
from tests.e2e.helpers import environment

TOKEN = "123456:TEST-TOKEN"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Running:
    """A process whose stdout is read line by line, everything read kept for the failure."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.seen: list[str] = []

    async def line_with(self, fragment: str, timeout: float = 30) -> str:
        assert self.process.stdout is not None
        try:
            async with asyncio.timeout(timeout):
                while True:
                    line = (await self.process.stdout.readline()).decode()
                    if not line:
                        raise AssertionError(f"exited before {fragment!r}: {self.seen}")
                    self.seen.append(line.rstrip("\n"))
                    if fragment in line:
                        return line
        except TimeoutError:
            raise AssertionError(f"no {fragment!r} within {timeout}s: {self.seen}") from None

    async def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()


@contextlib.asynccontextmanager
async def started(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[Running]:
    process = await asyncio.create_subprocess_exec(
        *args, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield Running(process)
    finally:
        if process.returncode is None:
            process.terminate()
            await asyncio.wait_for(process.wait(), 15)


async def test_a_person_types_to_the_bot_through_the_fakes_and_presses_its_buttons(
    tmp_path: Path,
) -> None:
    script = tmp_path / "replies.txt"
    script.write_text(
        "# the first answer asks for an outward call, which waits for the owner\n"
        '{"tool": "http", "arguments": {"method": "POST", "url": "https://example.com/x"}}\n',
        encoding="utf-8",
    )
    telegram_port, model_port = free_port(), free_port()
    python = sys.executable
    env = environment(tmp_path / "home")
    telegram_command = (python, "-m", "tests.fakes.telegram", "--port", str(telegram_port))
    model_command = (python, "-m", "tests.fakes.openai", "--port", str(model_port))
    bot_env = env | {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "AUGURE_TELEGRAM_API_URL": f"http://127.0.0.1:{telegram_port}",
        "AUGURE_ALLOWED_USERS": str(OWNER),
        "OPENAI_BASE_URL": f"http://127.0.0.1:{model_port}/v1",
        "OPENAI_API_KEY": "sk-by-hand",
        "AUGURE_MODEL": "test-model",
    }
    async with (
        started(*telegram_command, "--user", str(OWNER), env=env) as telegram,
        started(*model_command, "--script", str(script), env=env) as model,
    ):
        await telegram.line_with(f"fake Telegram on http://127.0.0.1:{telegram_port}")
        await model.line_with(f"on http://127.0.0.1:{model_port}/v1")
        async with started(python, "-m", "augure", "run", env=bot_env):
            await telegram.type("post it")
            await telegram.line_with("[1] Approve")
            await telegram.type("!reject")
            await telegram.line_with("bot> tool said: Tool call rejected by user.")
            await telegram.type("hello there")
            await telegram.line_with("bot> echo: hello there")
        await model.line_with("model< user: hello there")


@pytest.mark.parametrize("module", ["tests.fakes.telegram", "tests.fakes.openai"])
async def test_each_fake_stops_cleanly_on_sigterm(module: str, tmp_path: Path) -> None:
    port = free_port()
    async with started(sys.executable, "-m", module, "--port", str(port)) as fake:
        await fake.line_with(f"127.0.0.1:{port}")
        fake.process.terminate()
        assert await asyncio.wait_for(fake.process.wait(), 15) == 0


def try_it_block() -> list[str]:
    """The shell lines of the README's "Try it with no accounts", comments dropped."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("**Try it with no accounts**", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


async def test_the_readme_try_it_with_no_accounts_works_as_written(tmp_path: Path) -> None:
    """The README's three commands, as written but for the ports (free ones here) and the
    throwaway home: a message typed to the fake Telegram is answered through the fake model."""
    telegram_line, model_line, bot_line = try_it_block()
    ports = {"8081": str(free_port()), "8082": str(free_port())}

    def words(line: str) -> list[str]:
        for fixed, free in ports.items():
            line = line.replace(fixed, free)
        return shlex.split(line.replace("$(mktemp -d)", str(tmp_path / "home")))

    *assignments, program, verb = words(bot_line)
    assert (program, verb) == ("augure", "run")
    bot_env = environment(tmp_path / "home") | dict(a.split("=", 1) for a in assignments)
    telegram_command, model_command = words(telegram_line), words(model_line)
    assert telegram_command[:3] == ["python", "-m", "tests.fakes.telegram"]
    assert model_command[:3] == ["python", "-m", "tests.fakes.openai"]
    python = sys.executable
    env = environment(tmp_path / "home")
    async with (
        started(python, *telegram_command[1:], env=env) as telegram,
        started(python, *model_command[1:], env=env) as model,
    ):
        await telegram.line_with(f"fake Telegram on http://127.0.0.1:{ports['8081']}")
        await model.line_with(f"on http://127.0.0.1:{ports['8082']}/v1")
        async with started(python, "-m", "augure", "run", env=bot_env):
            await telegram.type("hello")
            await telegram.line_with("bot> echo: hello")
