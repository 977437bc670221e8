"""End-to-end harness: the real app, the real PTB and openai clients, fakes over loopback."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from augure.channels.telegram.bot import TelegramBot, build_application
from augure.channels.telegram.channel import TelegramChannel
from augure.config.settings import load_config
from augure.core.app import Core
from augure.core.lifespan import Augure
from augure.host.home import HomeLock
from augure.tools.base import Tool
from tests.fakes.openai import FakeOpenAI
from tests.fakes.telegram import FakeTelegram

OWNER = 1001
STRANGER = 2002
E2E = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: drives the real app over HTTP fakes (-m 'not e2e')")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)


def bot_environment(home: Path, telegram: FakeTelegram, llm: FakeOpenAI) -> dict[str, str]:
    return {
        "AUGURE_HOME": str(home),
        "TELEGRAM_BOT_TOKEN": telegram.token,
        "AUGURE_TELEGRAM_API_URL": telegram.root,
        "AUGURE_ALLOWED_USERS": str(OWNER),
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "sk-test-secret-key",
        "AUGURE_MODEL": "test-model",
        # The SDK's own backoff (0.5 s, doubling) is what production uses; keep it, fewer tries.
        "AUGURE__LLM__MAX_RETRIES": "2",
        "AUGURE__LLM__REQUEST_TIMEOUT_SECONDS": "5",
        # A test that forgets to press a button fails in seconds, not two minutes.
        "AUGURE__APPROVAL__TIMEOUT_SECONDS": "5",
        # `[telegram] fold_seconds` as shipped (0: each message answered at once); the tests
        # of folding (test_fold.py) set the window they need.
    }


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as fake:
        yield fake


@dataclass
class Bot:
    """Starts and stops the real app in this process, as `augure run` does."""

    home: Path
    telegram: FakeTelegram
    llm: FakeOpenAI
    monkeypatch: pytest.MonkeyPatch
    core: Core | None = None
    channel: TelegramBot | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    extra_tools: list[Tool] = field(default_factory=list)
    running: AsyncExitStack | None = None

    async def start(self) -> Bot:
        environment = bot_environment(self.home, self.telegram, self.llm) | self.extra_env
        for name in list(os.environ):
            if name.startswith("AUGURE__"):
                self.monkeypatch.delenv(name)
        for name, value in environment.items():
            self.monkeypatch.setenv(name, value)
        config = load_config()
        channel = TelegramChannel(config, build_application(config, self.telegram.token))
        # The lifespan `augure run` opens, home lock included (the CLI reads it to tell
        # whether a bot runs), without its companions.
        home_lock = HomeLock(config.home)
        self.channel = TelegramBot(config=config, channel=channel, home_lock=home_lock)
        running = Augure.opened(
            config,
            approvers=[channel],
            notifier=channel,
            progress=channel.progress,
            extra_tools=self.extra_tools,
            inbound=self.channel,
            home_lock=home_lock,
        )
        self.running = AsyncExitStack()
        opened = await self.running.enter_async_context(running)
        self.core = opened.core
        return self

    async def stop(self) -> None:
        if self.running is not None:
            await self.running.aclose()
        self.channel = self.core = self.running = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()


@pytest.fixture
def extra_tools(request: pytest.FixtureRequest) -> list[Tool]:
    """Tools added to the app: none, or those the test's module names with
    `pytestmark = pytest.mark.tools(*tools, reset=...)`. `reset`, when given, runs first, so
    what the tools keep between calls starts afresh for each test."""
    marked = request.node.get_closest_marker("tools")
    if marked is None:
        return []
    reset: Callable[[], object] | None = marked.kwargs.get("reset")
    if reset is not None:
        reset()
    return list(marked.args)


@pytest.fixture
def bot_env() -> dict[str, str]:
    """Extra environment for the app; a test module overrides it (e.g. a tool's settings)."""
    return {}


@pytest.fixture
async def bot(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    extra_tools: list[Tool],
    bot_env: dict[str, str],
) -> AsyncIterator[Bot]:
    running = Bot(
        tmp_path / "home", telegram, llm, monkeypatch, extra_tools=extra_tools, extra_env=bot_env
    )
    await running.start()
    yield running
    await running.stop()


@pytest.fixture
async def bot_with_config(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Callable[..., Awaitable[Bot]]]:
    """Starts the bot on an augure.toml of the test's own (and extra environment)."""
    started: list[Bot] = []

    async def with_config(toml: str, **env: str) -> Bot:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        (home / "augure.toml").write_text(toml, encoding="utf-8")
        bot = Bot(home, telegram, llm, monkeypatch, extra_env=env)
        started.append(bot)
        return await bot.start()

    yield with_config
    for bot in started:
        await bot.stop()
