"""`augure recall QUERY [--json]`, `augure recall forget ID` and `augure forget --chat ID`
(docs/recall.md)."""

from __future__ import annotations

import argparse
import json
from zoneinfo import ZoneInfo

from augure.common.errors import UsageError
from augure.config.settings import Config
from augure.tools.recall import describe

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
    from augure.core.lifespan import Augure

    words: list[str] = args.query
    if words[0] == "forget" and len(words) == 2:
        return await _forget_one(config, words[1])
    async with Augure.reading(config) as door:
        hits = await door.reports.recall(" ".join(words), args.chat, max(1, args.limit))
    if args.json:
        print(json.dumps([hit.as_json() for hit in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("Nothing found.")
    zone = ZoneInfo(config.zone)
    for hit in hits:
        print(describe(hit, zone))
    return 0


async def _forget_one(config: Config, text: str) -> int:
    from augure.core.lifespan import Augure

    entry = text.removeprefix("#")
    if not entry.isdigit():
        raise UsageError(f"not an archive id: {text!r} (see `augure recall QUERY`)")
    async with Augure.reading(config) as door:
        removed = await door.owner.forget_entry(int(entry))
    print(f"Forgot #{entry}. {BACKUPS}" if removed else f"No archived message #{entry}.")
    return 0 if removed else 1


async def forget(config: Config, args: argparse.Namespace) -> int:
    """Leave the request for the running bot, then wait for the owner's answer."""
    from augure.core.lifespan import Augure

    chat = str(args.chat)
    print(f"Asking the owner in Telegram to approve forgetting chat {chat}…")
    async with Augure.reading(config) as door:
        outcome = await door.owner.forget_chat(chat)
    if outcome.removed is not None:
        print(f"{outcome.removed} {BACKUPS}")
        return 0
    if outcome.state == "requested":
        raise UsageError("no running bot took the request: start `augure run` and try again")
    if outcome.state == "busy":
        running = ", ".join(outcome.running)
        print(
            f"Not now: chat {chat} still has work under way ({running}), which would write "
            "its words after the forget. Try again once it has ended (`augure tasks`)."
        )
        return 1
    print("Not approved: nothing was removed.")
    return 1
