"""`recall`: search what was said in past conversations, and the memory files
(docs/recall.md)."""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from augure.common.errors import NotDone
from augure.store.archive import RECALL_TOOL, RECALLED, Archive, Window
from augure.tools.base import RunContext, ToolResult, tool
from augure.tools.recall_search import Hit, Searcher
from augure.tools.result import relayed_source

NAME = RECALL_TOOL


class WhenError(NotDone):
    pass


# Deferred: the prompt lists it in one line (its docstring, which says when to use it), and
# its schema is sent only once the model loads it: most turns never search the past.
@tool(NAME, relays=True, deferred=True)
async def recall(
    ctx: RunContext,
    query: Annotated[str, Field(description="words of what to find")],
    chat: Annotated[
        Literal["this", "all"], Field(description="this chat, or all chats (owner only)")
    ] = "this",
    since: Annotated[str | None, Field(description="ISO date or time, e.g. 2026-03-01")] = None,
    until: Annotated[str | None, Field(description="ISO date or time, excluded")] = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> ToolResult:
    """Search past chats and memory files for something said before that is out of view.
    Past messages are kept after compaction; the best match comes first."""
    if chat == "all" and not _owner(ctx):
        return ToolResult.error('chat: "all" is for the owner only; search this chat.')
    if chat == "this" and ctx.chat_id is None:
        return ToolResult.error('No chat here to search: use chat: "all".')
    archive = Archive(ctx.store.db)
    try:
        zone = ZoneInfo(ctx.config.zone)
        end = _earliest(_moment(until, zone), await archive.turn_started(ctx.turn_id))
        window = Window(ctx.chat_id if chat == "this" else None, _moment(since, zone), end)
    except WhenError as exc:
        return ToolResult.error(str(exc))
    # The owner's notes are not a guest's to search (docs/security.md, "Guests").
    notes = (
        None if ctx.config.guest_chat(ctx.chat_id) and not ctx.config.guests.memory else ctx.memory
    )
    searcher = Searcher(archive, notes, ctx.embed, ctx.config.recall.embeddings_model)
    hits = await searcher.find(query, window, limit)
    if not hits:
        return ToolResult.ok(f"Nothing found for: {query.strip()}")
    sources = {hit.source for hit in hits if hit.source is not None}
    lines = [RECALLED, *(describe(hit, zone) for hit in hits)]
    # Outside content keeps its marking: the whole result is marked when any excerpt came
    # from outside, and each such excerpt names its source.
    return ToolResult.ok("\n".join(lines), source=relayed_source(NAME, sources))


def describe(hit: Hit, zone: ZoneInfo) -> str:
    excerpt = " ".join(hit.excerpt.split())
    if hit.file is not None:
        return f"[memory/{hit.file}] {excerpt}"
    assert hit.created_at is not None
    when = datetime.fromtimestamp(hit.created_at, zone).strftime("%Y-%m-%d %H:%M")
    origin = f" (outside content, from {hit.source})" if hit.source else ""
    return f"[#{hit.entry} {when} chat {hit.chat_id} {hit.role}{origin}] {excerpt}"


def _owner(ctx: RunContext) -> bool:
    """The owner typed it at the terminal, or the turn is in the owner's own chat."""
    owner = ctx.config.owner_chat
    return ctx.caller.started_by == "cli" or (owner is not None and ctx.chat_id == owner)


def _earliest(*moments: float | None) -> float | None:
    """The turn's own messages are in view already: a search looks before them."""
    known = [moment for moment in moments if moment is not None]
    return min(known) if known else None


def _moment(text: str | None, zone: ZoneInfo) -> float | None:
    """A date (its midnight) or a time, in the agent's time zone unless it names one."""
    if text is None or not text.strip():
        return None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise WhenError(f"{text!r} is not an ISO date or time (e.g. 2026-03-01)") from None
    if len(text.strip()) == 10:
        when = datetime.combine(date.fromisoformat(text.strip()), time())
    if when.tzinfo is None:
        when = when.replace(tzinfo=zone)
    return when.timestamp()
