"""Every model call priced and capped (docs/reference/spend.md), through the real bot, the real
openai SDK and the scripted endpoint: a subagent's own model, the skill-writing model, the
embeddings model and an answer that reports no usage all count against `[budget]`, and a
model with no price is not called while a cap is set."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from augure.llm.spend import BudgetReached
from augure.skills.generate import Request
from augure.skills.model import SkillError
from augure.store.spend import ModelCall
from augure.store.state import Store
from tests.e2e.conftest import OWNER
from tests.e2e.helpers import augure, environment
from tests.e2e.spending import CAPPED, Start, ask, texts
from tests.fakes.openai import FakeOpenAI, text, tool


def asked_of(llm: FakeOpenAI, model: str) -> int:
    return sum(request.get("model") == model for request in llm.requests)


async def test_a_subagents_own_model_is_priced_and_stopped_by_the_cap(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(
        CAPPED + '[agents.scout]\ninstructions = "Scouts."\nmodel = "scout-model"\n'
        "input_price_per_million = 1000.0\noutput_price_per_million = 1000.0\n"
    )
    llm.script(tool("task", {"prompt": "look around", "agent": "scout"}, usage=(1, 1)))
    # Its first step costs $0.015, over the $0.01 cap: its second step is never asked.
    llm.script_for("scout-model", tool("nothing_here", {}, usage=(10, 5)), text("Never."))
    llm.script(text("Done.", usage=(1, 1)))
    await ask(bot, "send the scout", "Sorry")
    (refusal,) = [t for t in texts(bot) if t.startswith("Sorry")]
    assert "daily budget of $0.01 is reached" in refusal
    assert asked_of(llm, "scout-model") == 1
    assert bot.core is not None
    report = await bot.core.budget.report()
    scout = report.today.by_model["scout-model"]
    assert scout.unpriced_calls == 0 and scout.usd == pytest.approx(15 * 1000 / 1e6)
    skipped = {name: t.skipped for name, t in report.today.by_origin.items() if t.skipped}
    assert skipped == {"subagent": 1, "chat": 1}


async def test_the_skill_writing_model_is_priced_and_stopped_by_the_cap(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(
        CAPPED + '[llm.coding]\nmodel = "coder"\n'
        "input_price_per_million = 1000.0\noutput_price_per_million = 1000.0\n"
    )
    llm.script_for("coder", text("not a skill", usage=(10, 5)), text("never asked"))
    assert bot.core is not None
    with pytest.raises(SkillError, match=r"daily budget of \$0\.01 is reached"):
        await bot.core.skills.create(Request("say hello", "manual", None, ()))
    assert asked_of(llm, "coder") == 1
    report = await bot.core.budget.report()
    assert report.today.by_model["coder"].usd == pytest.approx(15 * 1000 / 1e6)
    assert report.today.by_origin["skill generation"].skipped == 1


async def test_embeddings_are_priced_and_stopped_by_the_cap(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(
        '[budget]\ndaily_usd = 1.0\n[recall]\nembeddings_model = "embed-model"\n'
        "embeddings_price_per_million = 1000.0\n"
    )
    assert bot.core is not None and bot.core.indexer is not None
    embedder = bot.core.indexer.embedder
    await bot.core.indexer.catch_up()  # what the indexer embeds by itself at the start
    before = (await bot.core.budget.report()).today.by_origin.get("embedding")
    await embedder.embed(["one two three four five six"])  # six words: six tokens, $0.006
    after = (await bot.core.budget.report()).today.by_origin["embedding"]
    earlier = (before.prompt_tokens, before.usd) if before else (0, 0.0)
    assert after.prompt_tokens - earlier[0] == 6
    assert after.usd - earlier[1] == pytest.approx(0.006)
    day, month = bot.core.budget.today()
    await bot.core.budget.ledger.record(ModelCall(day, month, "chat", "x", cost_usd=2.0))
    sent = len(llm.embedding_requests)
    with pytest.raises(BudgetReached, match=r"daily budget of \$1\.00 is reached"):
        await embedder.embed(["seven"])
    assert len(llm.embedding_requests) == sent


async def test_an_answer_without_usage_is_counted_from_estimated_tokens(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(CAPPED)
    # A long answer with no usage: its estimated tokens at $1,000 per million pass the cap.
    llm.script(text("Estimated. " + "word " * 60, no_usage=True))
    await ask(bot, "hello", "Estimated.")
    await ask(bot, "again?", "daily budget of $0.01 is reached")
    assert len(llm.requests) == 1
    await ask(bot, "/usage", "Today (")
    (usage,) = [t for t in texts(bot) if "Today (" in t]
    assert "1 estimated (no usage reported)" in usage
    code, out, err = await augure("usage", "--json", env=environment(bot.home))
    assert code == 0, err
    chat = json.loads(out)["today"]["by_origin"]["chat"]
    assert chat["estimated_calls"] == 1 and chat["completion_tokens"] > 0
    assert chat["usd"] > 0.01


async def test_while_a_cap_is_set_an_unpriced_model_is_not_called(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(
        "[budget]\ndaily_usd = 0.5\n"
        '[agents.research]\ninstructions = "Digs."\nmodel = "research-model"\n'
        '[llm.coding]\nmodel = "coder"\n[recall]\nembeddings_model = "embed-model"\n'
    )
    llm.script(text("Never."))
    await ask(bot, "hello", "no price for model 'test-model'")
    (refusal,) = [t for t in texts(bot) if "no price for model" in t]
    assert "set [llm] input_price_per_million and output_price_per_million" in refusal
    assert "or remove the [budget] cap" in refusal and "\n" not in refusal
    assert llm.requests == []
    endpoint = {
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "sk-test",
        "AUGURE_MODEL": "test-model",
    }
    _, out, _ = await augure("doctor", env=environment(bot.home, endpoint))
    assert "warn  price test-model: no price" in out
    warned = {
        line.split(":")[0].removeprefix("warn  price "): line
        for line in out.splitlines()
        if line.startswith("warn  price ")
    }
    assert set(warned) == {"test-model", "research-model", "coder", "embed-model"}
    assert "set [agents.research] input_price_per_million" in warned["research-model"]
    assert "set [llm.coding] input_price_per_million" in warned["coder"]
    assert "set [recall] embeddings_price_per_million" in warned["embed-model"]


async def test_an_unpriced_subagent_model_is_refused_with_the_setting_to_add(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(
        CAPPED + '[agents.research]\ninstructions = "Digs."\nmodel = "cheap"\n'
    )
    llm.script(tool("task", {"prompt": "dig", "agent": "research"}, usage=(1, 1)))
    llm.script(text("The subagent could not run.", usage=(1, 1)))
    await ask(bot, "research it", "The subagent could not run.")
    assert asked_of(llm, "cheap") == 0
    (result,) = [m["content"] for m in llm.requests[1]["messages"] if m.get("role") == "tool"]
    assert "no price for model 'cheap': set [agents.research] input_price_per_million" in result


async def test_a_job_asking_an_unpriced_model_under_a_cap_is_skipped_naming_the_price(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config("[budget]\nmonthly_usd = 5.0\n")
    assert bot.core is not None
    core = bot.core
    await core.scheduler.create(prompt="report", chat_id=str(OWNER), cron="0 0 1 1 *", job_id="j")
    assert await core.scheduler.request_run("j", "cli")
    for running in await core.scheduler.tick():
        await running
    runs = await core.store.db.fetchall("SELECT status, reply FROM job_runs")
    assert runs and all(r["status"] == "skipped" for r in runs)
    assert all("no price for model 'test-model'" in r["reply"] for r in runs)
    (job,) = await core.store.db.fetchall("SELECT last_outcome FROM jobs WHERE id = 'j'")
    assert job["last_outcome"] == "skipped (budget: no price)"
    assert llm.requests == []


async def test_a_whole_answer_without_usage_is_counted_estimated_too(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(
        '[llm.coding]\nmodel = "coder"\n'
        "input_price_per_million = 1.0\noutput_price_per_million = 1.0\n"
    )
    llm.script_for("coder", *[text("not a skill at all", no_usage=True)] * 4)
    assert bot.core is not None
    with pytest.raises(SkillError):  # the answer is no skill: asked again, then given up
        await bot.core.skills.create(Request("say hello", "manual", None, ()))
    generation = (await bot.core.budget.report()).today.by_origin["skill generation"]
    assert generation.estimated_calls == generation.calls == asked_of(llm, "coder")
    assert generation.prompt_tokens > 0 and generation.completion_tokens > 0
    assert generation.usd > 0


async def test_under_a_cap_speech_with_no_price_is_not_asked_for(
    bot_with_config: Start, llm: FakeOpenAI
) -> None:
    bot = await bot_with_config(
        CAPPED.replace("0.01", "5.0"),
        AUGURE__VOICE__REPLIES="always",
        AUGURE__VOICE__TTS_MODEL="tts-test",
    )
    llm.script(text("It is sunny.", usage=(10, 5)))
    await ask(bot, "weather?", "It is sunny.")
    assert llm.speeches == []
    assert bot.core is not None
    report = await bot.core.budget.report()
    assert report.today.by_origin["speech"].skipped == 1


async def test_the_terminals_recall_embeds_through_the_budget(
    tmp_path: Path, llm: FakeOpenAI
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "augure.toml").write_text(
        '[budget]\ndaily_usd = 1.0\n[recall]\nembeddings_model = "embed-model"\n'
        "embeddings_price_per_million = 1000.0\n"
    )
    store = await Store.open(home / "state.db")
    try:
        conversation = await store.open_conversation("1")
        await store.add_messages(
            conversation, [{"role": "user", "content": "the spare key is under the flowerpot"}]
        )
    finally:
        await store.close()
    env = environment(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "sk-test"})

    code, out, err = await augure("recall", "flowerpot", env=env)
    assert code == 0 and "spare key is under the flowerpot" in out, err
    assert len(llm.embedding_requests) == 1
    with sqlite3.connect(home / "state.db") as db:
        rows = db.execute("SELECT origin, model, cost_usd, day, month FROM model_calls").fetchall()
        assert [row[:3] for row in rows] == [("embedding", "embed-model", pytest.approx(0.001))]
        day, month = rows[0][3:]
        db.execute(  # the day's cap is reached
            "INSERT INTO spend_totals (period, usd) VALUES (?, 2.0), (?, 2.0) "
            "ON CONFLICT (period) DO UPDATE SET usd = 2.0",
            (f"day:{day}", f"month:{month}"),
        )

    code, out, err = await augure("recall", "flowerpot", env=env)
    assert code == 0 and "spare key is under the flowerpot" in out, err  # by its words
    assert len(llm.embedding_requests) == 1
    with sqlite3.connect(home / "state.db") as db:
        # The running bot, not a terminal command, tells the owner of the cap.
        assert db.execute("SELECT count(*) FROM budget_notices").fetchone() == (0,)
        skipped = db.execute("SELECT count(*) FROM model_calls WHERE outcome = 'skipped'")
        assert skipped.fetchone() == (1,)
