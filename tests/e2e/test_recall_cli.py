"""`augure recall` and `augure forget --chat` at the terminal (docs/recall.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from augure.store.archive import Archive, Window
from augure.store.state import Store
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import approval_message, augure, buttons, environment, hello


async def _chat(home: Path, chat: str, *texts: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    store = await Store.open(home / "state.db")
    try:
        conversation = await store.open_conversation(chat)
        await store.add_messages(conversation, [{"role": "user", "content": t} for t in texts])
    finally:
        await store.close()


async def test_recall_searches_every_chat_and_forget_removes_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    await _chat(home, "1", "the spare key is under the blue flowerpot", "lunch at noon")
    await _chat(home, "2", "flowerpot order arrives Friday")
    env = environment(home)

    code, out, err = await augure("recall", "flowerpot", "key", "--json", env=env)
    assert code == 0, err
    found = json.loads(out)
    assert [(h["chat"], h["role"]) for h in found] == [("1", "user"), ("2", "user")]
    assert "spare key is under the blue flowerpot" in found[0]["excerpt"]
    assert found[0]["date"].endswith("Z") and found[0]["source"] is None

    code, out, _ = await augure("recall", "flowerpot", "--chat", "2", env=env)
    assert code == 0 and "chat 2 user] flowerpot order" in out and "chat 1" not in out

    code, out, _ = await augure("recall", "forget", str(found[0]["id"]), env=env)
    assert code == 0 and out.startswith(f"Forgot #{found[0]['id']}. ")
    assert "Backups made before still hold the words" in out
    code, out, _ = await augure("recall", "spare", "key", "--json", env=env)
    assert code == 0 and json.loads(out) == []
    code, out, _ = await augure("recall", "forget", str(found[0]["id"]), env=env)
    assert code == 1 and "No archived message" in out


async def _wiped(bot: Bot, decision: str) -> tuple[int, str]:
    assert bot.core is not None
    await hello(bot.telegram)  # the owner's chat exists once they wrote to the bot
    conversation = await bot.core.store.open_conversation("-500")
    await bot.core.store.add_messages(conversation, [{"role": "user", "content": "gossip zebra"}])
    command = asyncio.create_task(
        augure("forget", "--chat", "-500", env=environment(bot.home), timeout=60)
    )
    message = await approval_message(bot)
    assert "forget_chat" in message["text"] and "-500" in message["text"]
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)[decision])
    code, out, err = await command
    assert "Traceback" not in err, err
    return code, out


async def test_forget_chat_wipes_the_archive_once_the_owner_approves_in_telegram(
    bot: Bot,
) -> None:
    code, out = await _wiped(bot, "Approve")
    assert code == 0 and "Forgot chat -500: 1 messages, 1 archived messages" in out
    assert bot.core is not None
    assert await Archive(bot.core.store.db).search("zebra", Window(), 5) == []


async def test_forget_chat_rejected_in_telegram_removes_nothing(bot: Bot) -> None:
    code, out = await _wiped(bot, "Reject")
    assert code == 1 and "nothing was removed" in out
    assert bot.core is not None
    assert len(await Archive(bot.core.store.db).search("zebra", Window(), 5)) == 1


async def test_since_and_until_bound_the_search(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    home = tmp_path / "home"
    await _chat(home, "1", "the quince tree was pruned")
    env = environment(home, {"AUGURE__AGENT__TIMEZONE": "UTC"})
    today = datetime.now(UTC).date()  # the agent's zone, set above

    async def search(**window: str) -> tuple[int, str]:
        arguments = json.dumps({"query": "quince", "chat": "all", **window})
        code, out, _ = await augure("tools", "run", "recall", "--args", arguments, env=env)
        return code, out

    yesterday, tomorrow = str(today - timedelta(days=1)), str(today + timedelta(days=1))
    code, out = await search(since=yesterday, until=tomorrow)
    assert code == 0 and "the quince tree was pruned" in out
    assert "Nothing found" in (await search(since=tomorrow))[1]
    assert "Nothing found" in (await search(until=yesterday))[1]
    code, out = await search(since="last week")
    assert code == 1 and "not an ISO date" in out
    code, out = await search(chat="this")
    assert code == 1 and "No chat here" in out
