"""Recall over HTTP: facts said before compactions, memory files, other chats, vectors, and
outside content (docs/recall.md)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

import pytest

from augure.agent.history import SUMMARY_PROMPT
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import until
from tests.fakes.openai import Reply, text, tool

PADDING = "y" * 800


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {"AUGURE__AGENT__HISTORY_TOKENS": "1000"}


def _owner_text(body: dict[str, Any]) -> str:
    users = [m for m in body["messages"] if m["role"] == "user"]
    content = users[-1]["content"] if users else ""
    return content if isinstance(content, str) else json.dumps(content)


def _tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def answering(searches: dict[str, dict[str, Any]]) -> Any:
    """A model that summarises when asked to, calls `recall` with the arguments given for a
    question, then answers with what the tool returned; else answers at length."""

    def respond(body: dict[str, Any]) -> Reply:
        if body["messages"][0]["content"] == SUMMARY_PROMPT:
            return text("SUMMARY of the early talk")
        asked = _owner_text(body)
        if asked in searches:
            found = _tool_texts(body)
            if body["messages"][-1]["role"] == "tool":
                return text("RECALLED " + found[-1][:2000])
            return tool("recall", searches[asked])
        return text("ok " + "x" * 800)

    return respond


async def _say(bot: Bot, message: str, chat: int = OWNER) -> None:
    before = len(bot.telegram.sent("sendMessage"))
    bot.telegram.inject_message(OWNER, message, chat_id=chat)
    await bot.telegram.wait_for("sendMessage", count=before + 1, timeout=15)


def _summaries(bot: Bot) -> int:
    return sum(1 for r in bot.llm.requests if r["messages"][0]["content"] == SUMMARY_PROMPT)


def _recalled(bot: Bot) -> str:
    return bot.llm.requests[-1]["messages"][-1]["content"]


async def test_a_fact_said_before_two_compactions_is_recalled_though_gone_from_history(
    bot: Bot,
) -> None:
    question = "what was my locker code?"
    bot.llm.responder = answering({question: {"query": "gym locker code"}})
    await _say(bot, "Note: my gym locker code is 4711.")
    for n in range(10):
        await _say(bot, f"padding {n} {PADDING}")
    assert _summaries(bot) >= 2
    await _say(bot, question)

    asked = [r for r in bot.llm.requests if _owner_text(r) == question]
    assert "4711" not in json.dumps(asked[0]["messages"])  # compacted away from the history
    recalled = _recalled(bot)
    assert "4711" in recalled and "locker" in recalled
    assert f"chat {OWNER} user" in recalled
    assert bot.llm.embedding_requests == []  # no [recall] embeddings_model: never asked
    # One line of the system prompt (all of it stable across turns) says when to search.
    system = bot.llm.requests[-1]["messages"][0]["content"]
    assert "- recall: Search past chats" in system and "said before" in system


async def test_memory_files_are_found(bot: Bot) -> None:
    memory = bot.home / "memory"
    (memory / "people.md").write_text("# People\n\nAunt Zelda lives in Lisbon.\n")
    question = "where does Zelda live?"
    bot.llm.responder = answering({question: {"query": "Zelda"}})
    await _say(bot, question)
    assert "[memory/people.md] Aunt Zelda lives in Lisbon." in _recalled(bot)


async def test_another_chats_messages_are_not_returned_to_this_chat(bot: Bot) -> None:
    group = -500
    question = "what is the boat called?"
    bot.llm.responder = answering({question: {"query": "boat called"}})
    await _say(bot, "@augure_test_bot the boat is called Seagull", chat=group)
    await _say(bot, question)
    assert "Seagull" not in _recalled(bot) and "Nothing found" in _recalled(bot)
    # The owner may search every chat; a group may not.
    bot.llm.responder = answering({question: {"query": "boat called", "chat": "all"}})
    await _say(bot, question)
    assert "Seagull" in _recalled(bot) and f"chat {group}" in _recalled(bot)
    # The same question, asked in the group (the mention is not part of the text).
    await _say(bot, f"@augure_test_bot {question}", chat=group)
    assert _recalled(bot).startswith('Error: chat: "all" is for the owner only')


async def test_outside_content_stays_marked_when_recalled(bot: Bot) -> None:
    page = "The Quokka Festival is on 12 May, said the web page."
    question = "when is the quokka festival?"
    bot.llm.responder = answering({question: {"query": "quokka festival"}})
    core = bot.core
    assert core is not None
    conversation = await core.store.open_conversation(str(OWNER))
    marked = f'<untrusted_content source="web_fetch">\n{page}\n</untrusted_content>'
    call = {"id": "c1", "type": "function", "function": {"name": "web_fetch", "arguments": "{}"}}
    await core.store.add_messages(
        conversation,
        [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": marked},
        ],
    )
    await _say(bot, question)
    recalled = _recalled(bot)
    assert recalled.startswith('<untrusted_content source="recall: web_fetch">')
    assert "outside content, from web_fetch" in recalled and "12 May" in recalled


async def test_a_forgotten_message_is_gone_from_the_index(bot: Bot) -> None:
    from augure.store.archive import Archive, Window
    from augure.store.words import forget_entry

    await _say(bot, "the wifi password is tangerine")
    assert bot.core is not None
    archive = Archive(bot.core.store.db)
    [entry] = await archive.search("tangerine", Window(), 10)
    assert await forget_entry(bot.core.store.db, entry.id)
    assert await archive.search("tangerine", Window(), 10) == []
    with sqlite3.connect(bot.home / "state.db") as connection:
        left = connection.execute(
            "SELECT count(*) FROM archive_index WHERE archive_index MATCH 'tangerine'"
        ).fetchone()
    assert left == (0,)


class TestVectors:
    @pytest.fixture
    def bot_env(self) -> dict[str, str]:
        return {"AUGURE__RECALL__EMBEDDINGS_MODEL": "text-embedding-3-small"}

    async def test_a_query_sharing_no_word_finds_a_close_message_through_embeddings(
        self, bot: Bot
    ) -> None:
        question = "remind me about the automobile"
        bot.llm.responder = answering({question: {"query": "automobile"}})
        await _say(bot, "I parked the sedan on level three")
        await until(
            bot.home / "state.db",
            "SELECT 1 FROM archive_vectors v JOIN archive a ON a.id = v.archive_id "
            "WHERE a.text LIKE '%sedan%'",
        )
        await _say(bot, question)
        assert "sedan on level three" in _recalled(bot)
        batches = bot.llm.embedding_requests
        assert all(r["model"] == "text-embedding-3-small" for r in batches)
        assert any("automobile" in r["input"] for r in batches)  # the query
        assert any(isinstance(r["input"], list) and len(r["input"]) > 1 for r in batches)

    async def test_memory_paragraphs_are_embedded_and_found_by_meaning(self, bot: Bot) -> None:
        (bot.home / "memory" / "pets.md").write_text("# Pets\n\nKeiko adopted a kitten.\n")
        kitten = hashlib.sha256(b"Keiko adopted a kitten.").hexdigest()
        await until(
            bot.home / "state.db", f"SELECT 1 FROM memory_vectors WHERE digest = '{kitten}'"
        )
        question = "any news about a feline?"
        bot.llm.responder = answering({question: {"query": "feline"}})
        await _say(bot, question)
        assert "[memory/pets.md] Keiko adopted a kitten." in _recalled(bot)
