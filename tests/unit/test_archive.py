"""The archive (docs/recall.md): what is kept, how an old home gets it, what forgetting does."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from augure.config.settings import load_config
from augure.core.app import Core
from augure.store.archive import Archive, Window, telling
from augure.store.migrations import MIGRATIONS
from augure.store.state import Store
from augure.store.words import forget_chat
from tests.cores import Cores
from tests.fakes.model import ScriptedModel, answer, call

MakeCore = Callable[..., Awaitable[tuple[Core, ScriptedModel]]]


@pytest.fixture
async def make_core(tmp_path: Path) -> AsyncIterator[MakeCore]:
    opened = Cores()

    async def make(*script: object) -> tuple[Core, ScriptedModel]:
        home = tmp_path / f"home{len(opened)}"
        home.mkdir()
        (home / "augure.toml").write_text("")
        model = ScriptedModel(*script)  # type: ignore[arg-type]
        return await opened.open(load_config(home=home), model=model), model

    yield make
    await opened.close()


async def _found(store: Store, words: str, chat: str | None = None) -> list[str]:
    return [e.excerpt for e in await Archive(store.db).search(words, Window(chat), 10)]


async def test_the_answer_after_a_pruned_mistake_is_archived(make_core: MakeCore) -> None:
    # The pruning rewrite stores the turn's answer itself; the archive must get it too.
    core, _ = await make_core(call("no_such_tool"), answer("The ferry leaves at 7:40."))
    await core.agent.handle("1", "when is the ferry?")
    assert "The ferry leaves at 7:40." in await _found(core.store, "ferry leaves")


async def test_new_keeps_the_old_conversation_searchable(make_core: MakeCore) -> None:
    core, _ = await make_core(answer("Noted: the plumber is Marek."), answer("hi"))
    await core.agent.handle("1", "the plumber's name is Marek")
    await core.agent.new_conversation("1")
    await core.agent.handle("1", "hello")
    assert len(await _found(core.store, "Marek", chat="1")) == 2
    assert await _found(core.store, "Marek", chat="2") == []


def _old_home(db: Path) -> None:
    """A state.db as the release before the archive left it."""
    connection = sqlite3.connect(db)
    archive = next(i for i, script in enumerate(MIGRATIONS) if "CREATE TABLE archive" in script)
    for number, script in enumerate(MIGRATIONS[:archive], start=1):
        connection.executescript(f"BEGIN;\n{script}\nPRAGMA user_version={number};\nCOMMIT;")
    connection.executescript(
        """
        INSERT INTO conversations (id, chat_id, started_at) VALUES (1, '77', 0);
        INSERT INTO messages (conversation_id, role, content, created_at) VALUES
            (1, 'user', '[Summary of the earlier conversation:]
        <untrusted_content source="web_fetch">
        the summary names the volcano
        </untrusted_content>', 1),
            (1, 'system', 'Summary of the earlier conversation: volcano trip', 2),
            (1, 'user', 'book the volcano tour for Tuesday', 3),
            (1, 'tool', '<untrusted_content source="web_fetch">
        Volcano tours: Etna, daily at nine.
        </untrusted_content>', 4),
            (1, 'assistant', 'Booked the volcano tour.', 5);
        """
    )
    connection.close()


async def test_the_migration_indexes_an_existing_homes_history(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    _old_home(db)
    store = await Store.open(db)
    try:
        entries = await Archive(store.db).search("volcano", Window("77"), 10)
    finally:
        await store.close()
    found = {(e.role, e.source, e.excerpt.strip()) for e in entries}
    assert found == {
        ("user", None, "book the volcano tour for Tuesday"),
        ("tool", "web_fetch", "Volcano tours: Etna, daily at nine."),
        ("assistant", None, "Booked the volcano tour."),
    }


async def test_forgetting_a_chat_empties_its_index_only(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    try:
        for chat in ("1", "2"):
            conversation = await store.open_conversation(chat)
            await store.add_messages(conversation, [{"role": "user", "content": "kumquat jam"}])
        assert (await forget_chat(store.db, tmp_path, "1")).archived == 1
        assert await _found(store, "kumquat", "1") == []
        assert await _found(store, "kumquat", "2") == ["kumquat jam"]
    finally:
        await store.close()


async def test_words_common_to_the_archive_are_left_out_of_a_search(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "state.db")
    try:
        conversation = await store.open_conversation("1")
        talk = [{"role": "user", "content": f"what is the plan for day {n}"} for n in range(400)]
        await store.add_messages(conversation, talk)
        await store.add_messages(conversation, [{"role": "user", "content": "the zebra is Otto"}])

        def words(connection: sqlite3.Connection) -> list[str]:
            return telling(connection, ["what", "is", "the", "zebra"])

        assert await store.db.read(words) == ["zebra"]
        only_common = await store.db.read(lambda c: telling(c, ["what", "the", "plan"]))
        assert len(only_common) == 2  # nothing rarer: the two rarest still search
        assert await _found(store, "what is the zebra") == ["the zebra is Otto"]
    finally:
        await store.close()
