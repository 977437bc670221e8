"""Fallback models and roles through the real bot, the real openai SDK and the scripted
endpoint (docs/reference/spend.md#fallbacks): a rate limit or a server error yields the
fallback's answer, a refused key does not; a stream falls back only before its first piece;
a summary goes to the summary model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from augure.agent.history import SUMMARY_PROMPT
from augure.scheduler.heartbeat import Beat
from tests.e2e.conftest import OWNER, Bot
from tests.fakes.openai import FakeOpenAI, Reply, error, text, tool
from tests.fakes.telegram import FakeTelegram

Start = Callable[..., Awaitable[Bot]]

BACKUP = """\
[[llm.fallbacks]]
model = "backup-model"
input_price_per_million = 1.0
output_price_per_million = 1.0
"""
CHEAP = BACKUP.replace("backup-model", "cheap-model")


@pytest.fixture
async def start(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Start]:
    started: list[Bot] = []

    async def with_config(toml: str, **env: str) -> Bot:
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        (home / "augure.toml").write_text(toml, encoding="utf-8")
        # One retry of its own before the primary gives way (the SDK's backoff, shortened).
        bot = Bot(home, telegram, llm, monkeypatch, extra_env={"AUGURE__LLM__MAX_RETRIES": "1"})
        bot.extra_env |= env
        started.append(bot)
        return await bot.start()

    yield with_config
    for bot in started:
        await bot.stop()


def texts(bot: Bot) -> list[str]:
    return [m.get("text", "") for m in bot.telegram.messages(OWNER)]


def models_asked(llm: FakeOpenAI) -> list[str]:
    return [request["model"] for request in llm.requests]


async def ask(bot: Bot, words: str, expected: str) -> None:
    bot.telegram.inject_message(OWNER, words)
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and expected in str(c.params.get("text")), timeout=15
    )


@pytest.mark.parametrize("status", [429, 500])
async def test_the_primary_failing_after_its_retries_yields_the_fallbacks_answer(
    start: Start, llm: FakeOpenAI, status: int
) -> None:
    bot = await start(BACKUP)
    llm.script_for("test-model", error(status), error(status))
    llm.script_for("backup-model", text("From the backup.", usage=(100, 10)))
    await ask(bot, "hello", "From the backup.")
    assert models_asked(llm) == ["test-model", "test-model", "backup-model"]

    await ask(bot, "/status", "Last fallback")
    (status_text,) = [t for t in texts(bot) if "Last fallback" in t]
    fell_back = "rate limited" if status == 429 else "unavailable"
    assert "Last fallback: backup-model answered at " in status_text
    assert f"test-model failed ({fell_back}: the model endpoint answered {status})" in status_text
    await ask(bot, "/usage", "Last turn")
    (usage,) = [t for t in texts(bot) if "Last turn" in t]
    assert "Last turn (backup-model" in usage and "models: " not in usage
    assert bot.core is not None
    report = await bot.core.budget.report()
    assert set(report.today.by_model) == {"backup-model"}
    assert report.today.by_model["backup-model"].usd == pytest.approx(110 / 1e6)


async def test_a_refused_key_reaches_the_owner_and_no_fallback_is_asked(
    start: Start, llm: FakeOpenAI
) -> None:
    bot = await start(BACKUP)
    llm.script_for("test-model", error(401, "Incorrect API key provided"))
    llm.script_for("backup-model", text("Never asked."))
    await ask(bot, "hello", "rejected the API key (401)")
    assert models_asked(llm) == ["test-model"]
    assert not any("Never asked." in t for t in texts(bot))


@pytest.mark.parametrize(
    "failure",
    [Reply(text="Never shown to the owner.", cut_after=1), error(500)],
    ids=["cut-before-any-text", "500"],
)
async def test_a_stream_that_fails_before_its_first_piece_is_answered_by_the_fallback(
    start: Start, llm: FakeOpenAI, failure: Reply
) -> None:
    bot = await start(BACKUP, AUGURE__TELEGRAM__STREAMING="true")
    llm.script_for("test-model", failure, failure)
    llm.script_for("backup-model", text("Streamed from the backup."))
    await ask(bot, "hello", "Streamed from the backup.")
    await bot.telegram.wait_idle(quiet=0.3)
    assert models_asked(llm)[-1] == "backup-model"
    shown = [c.params.get("text") for c in bot.telegram.sent() if "text" in c.params]
    assert not any("Never shown" in str(t) for t in shown)
    assert texts(bot)[-1] == "Streamed from the backup."


async def test_a_stream_cut_after_some_text_is_finalised_with_a_note_never_asked_again(
    start: Start, llm: FakeOpenAI
) -> None:
    bot = await start(BACKUP, AUGURE__TELEGRAM__STREAMING="true")
    story = "Once upon a time there was a cut. " * 4
    llm.script_for("test-model", Reply(text=story, chunk_size=8, cut_after=4))
    llm.script_for("backup-model", text("A second story."))
    bot.telegram.inject_message(OWNER, "tell me a story")
    await bot.telegram.wait_for(lambda c: "[cut off:" in str(c.params.get("text")), timeout=15)
    await bot.telegram.wait_idle(quiet=0.3)
    assert models_asked(llm) == ["test-model"]
    (answer,) = [t for t in texts(bot) if "Once upon" in t]  # one message, finished in place
    assert answer.startswith("Once upon a time") and answer.endswith(
        "[cut off: the model's answer was cut off half-way]"
    )


async def test_a_summary_goes_to_the_summary_model(start: Start, llm: FakeOpenAI) -> None:
    toml = CHEAP + '[llm.roles]\nsummary = "cheap-model"\n'
    toml += "[agent]\nhistory_tokens = 1000\n"
    bot = await start(toml)
    llm.script_for("cheap-model", text("They talked about a long story.", usage=(500, 20)))
    llm.script(text("Noted."), text("Next answer."))
    await ask(bot, "A long story: " + "and then it went on. " * 250, "Noted.")
    await ask(bot, "what next?", "Next answer.")
    summaries = [r for r in llm.requests if r["messages"][0]["content"] == SUMMARY_PROMPT]
    assert [r["model"] for r in summaries] == ["cheap-model"]
    assert models_asked(llm) == ["test-model", "cheap-model", "test-model"]
    assert bot.core is not None
    report = await bot.core.budget.report()
    assert report.today.by_origin["summary"].calls == 1
    assert set(report.today.by_model) == {"test-model", "cheap-model"}


async def test_the_heartbeat_goes_to_the_heartbeat_model(start: Start, llm: FakeOpenAI) -> None:
    toml = CHEAP + '[llm.roles]\nheartbeat = "cheap-model"\n'
    bot = await start(toml, AUGURE__HEARTBEAT__ACTIVE_HOURS="00:00-24:00")
    assert bot.core is not None
    (bot.core.config.memory_dir / "heartbeat.md").write_text("- Is the door locked?\n")
    llm.script_for("cheap-model", text("HEARTBEAT_OK"))
    assert await bot.core.heartbeat.beat() is Beat.OK
    assert models_asked(llm) == ["cheap-model"]
    report = await bot.core.budget.report()
    assert set(report.today.by_origin) == {"heartbeat"}


async def test_a_subagent_goes_to_the_subagent_model(start: Start, llm: FakeOpenAI) -> None:
    toml = CHEAP + '[llm.roles]\nsubagent = "cheap-model"\n'
    toml += '[agents.scout]\ninstructions = "Scouts."\ntools = []\n'
    bot = await start(toml)
    llm.script_for("test-model", tool("task", {"prompt": "look", "agent": "scout"}))
    llm.script_for("test-model", text("The scout found it."))
    llm.script_for("cheap-model", text("Found it."))
    await ask(bot, "send the scout", "The scout found it.")
    assert models_asked(llm) == ["test-model", "cheap-model", "test-model"]
    assert bot.core is not None
    report = await bot.core.budget.report()
    assert report.today.by_origin["subagent"].calls == 1
