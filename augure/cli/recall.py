"""`augure recall QUERY [--json]`, `augure recall forget ID` and `augure forget --chat ID`
(docs/recall.md)."""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any
from zoneinfo import ZoneInfo

from augure.common.errors import UsageError
from augure.config.settings import Config
from augure.core import forgetting
from augure.memory.store import MemoryStore
from augure.store.archive import Archive, Window
from augure.store.state import Store
from augure.store.words import forget_entry
from augure.tools.recall import describe
from augure.tools.recall_search import Searcher
from augure.tools.recall_vectors import Embedder

# How long the command waits for a running bot to take its request before giving up.
PICKUP_SECONDS = 15.0
BACKUPS = "Backups made before still hold the words: delete those to forget them there too."


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    recall = commands.add_parser(
        "recall",
        help="search past messages and the memory files",
        description="Search the archive of past messages and the memory files, best match "
        "first. `augure recall forget ID` removes the archived message #ID.",
    )
    recall.add_argument("query", nargs="+", help="words to find (or: forget ID)")
    recall.add_argument("--chat", help="only this chat (default: every chat)")
    recall.add_argument("--limit", type=int, default=10, help="at most this many (10)")
    recall.add_argument("--json", action="store_true", help="one JSON array on stdout")
    forget = commands.add_parser(
        "forget",
        help="forget a chat everywhere (the owner approves in Telegram)",
        description="Forget everything said in a chat: its conversations, archive, tool "
        "calls' arguments and outputs, background tasks, job replies and saved outputs, with "
        "no copy left in state.db or its WAL. Backups made before still hold them. The "
        "running bot asks the owner to approve it in Telegram; this command waits for the "
        "answer.",
    )
    forget.add_argument("--chat", required=True, help="the chat id to forget")


async def recall(config: Config, args: argparse.Namespace) -> int:
    words: list[str] = args.query
    if words[0] == "forget" and len(words) == 2:
        return await _forget_one(config, words[1])
    store = await Store.open(config.db_path)
    embedder = _embedder(config, store)
    try:
        searcher = Searcher(
            Archive(store.db),
            MemoryStore(config.memory_dir),
            embedder.embed if embedder else None,
            config.recall.embeddings_model,
        )
        hits = await searcher.find(" ".join(words), Window(args.chat), max(1, args.limit))
    finally:
        await store.close()
        if embedder is not None:
            await embedder.models.close()
            if embedder.models.transcriber is not None:
                await embedder.models.transcriber.close()
    if args.json:
        print(json.dumps([hit.as_json() for hit in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("Nothing found.")
    zone = ZoneInfo(config.zone)
    for hit in hits:
        print(describe(hit, zone))
    return 0


def _embedder(config: Config, store: Store) -> Embedder | None:
    """The query's embedding, checked against `[budget]` and counted like the bot's calls."""
    if config.recall.embeddings_model is None:
        return None
    from augure.core.spend import SpendCaps
    from augure.llm.client import LLM
    from augure.llm.models import build_models
    from augure.store.spend import Ledger

    llm = LLM(config.llm)
    models = build_models(config, llm, llm, SpendCaps(config, Ledger(store.db)))
    return Embedder(models, config.recall)


async def _forget_one(config: Config, text: str) -> int:
    entry = text.removeprefix("#")
    if not entry.isdigit():
        raise UsageError(f"not an archive id: {text!r} (see `augure recall QUERY`)")
    store = await Store.open(config.db_path)
    try:
        removed = await forget_entry(store.db, int(entry))
    finally:
        await store.close()
    print(f"Forgot #{entry}. {BACKUPS}" if removed else f"No archived message #{entry}.")
    return 0 if removed else 1


async def forget(config: Config, args: argparse.Namespace) -> int:
    """Leave the request for the running bot, then wait for the owner's answer."""
    chat = str(args.chat)
    store = await Store.open(config.db_path)
    try:
        await forgetting.write_request(store, chat, {"state": "requested"})
        print(f"Asking the owner in Telegram to approve forgetting chat {chat}…")
        state = await _outcome(store, chat, config.approval.timeout_seconds)
        await forgetting.drop_request(store, chat)
    finally:
        await store.close()
    if state.get("state") == "done":
        print(f"{forgetting.summary(chat, state)} {BACKUPS}")
        return 0
    if state.get("state") == "requested":
        raise UsageError("no running bot took the request: start `augure run` and try again")
    if state.get("state") == "busy":
        running = ", ".join(state["running"])
        print(
            f"Not now: chat {chat} still has work under way ({running}), which would write "
            "its words after the forget. Try again once it has ended (`augure tasks`)."
        )
        return 1
    print("Not approved: nothing was removed.")
    return 1


async def _outcome(store: Store, chat: str, approval_seconds: float) -> dict[str, Any]:
    started = time.monotonic()
    state: dict[str, Any] = {"state": "requested"}
    while True:
        found = dict(await forgetting.requests(store)).get(chat, state)
        state = found
        waited = time.monotonic() - started
        if state.get("state") in ("done", "rejected", "busy"):
            return state
        if state.get("state") == "requested" and waited > PICKUP_SECONDS:
            return state
        if waited > PICKUP_SECONDS + approval_seconds + 10:
            return {"state": "rejected"}
        await asyncio.sleep(0.25)
