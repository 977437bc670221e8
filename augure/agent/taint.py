"""What a turn has read before its first call: the start of its `Reading` (its taint).

The model sees the whole conversation, so a page read three turns ago still steers it: the
turn starts from the conversation's tool results, with their provenance (the tools that made
them) and what kind of thing each was (a page, a listing, a message), its summary's sources,
and what the owner wrote. A result shown as an error (`Error: ...`), or relayed from others,
offers no link. A turn that reports background work reads that work's result as outside
content, not as the owner's words.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from augure.agent import history
from augure.agent.turn import Turn
from augure.common.caller import Reading
from augure.tools.registry import ToolRegistry
from augure.tools.result import ERROR, FORWARDED, MARKED, OPENED, UNTRUSTED_CLOSE, UNTRUSTED_OPEN

# Marked text inside a message is by construction not the owner's: the marker cannot be
# opened or closed from inside the content (augure/tools/result.py). Its source is read too.
SOURCED = re.compile(
    re.escape(UNTRUSTED_OPEN).replace(re.escape("{source}"), '([^"]*)')
    + "(.*?)"
    + re.escape(UNTRUSTED_CLOSE),
    re.DOTALL,
)


def reading_of(conversation: history.Conversation, registry: ToolRegistry, turn: Turn) -> Reading:
    """`turn.asked_from`: the source of the newest message when it is not the owner's (a
    background task's result). `turn.carried`: what the unit that wrote the turn's message
    had read — its sources and, for a report turn, the releasing turn's fetches. The
    conversation is read when the check first asks."""
    messages = list(conversation.messages)  # as the turn starts; the turn adds its own
    summary = conversation.summary_sources
    carried = turn.carried
    # A job or skill conversation written by a unit that had read outside content holds the
    # model's words, not the owner's: a URL it composed there must not pass as theirs.
    earlier = functools.partial(
        _read, messages, summary, registry, turn.asked_from, bool(carried.sources)
    )
    reading = Reading(sources=carried.sources, earlier=earlier)
    reading.fetches = carried.fetches
    return reading


def _read(
    messages: list[dict[str, Any]],
    summary: list[str] | None,
    registry: ToolRegistry,
    asked_from: str | None,
    written_by_model: bool,
    reading: Reading,
) -> None:
    called: dict[str, str] = {}
    for index, message in enumerate(messages):
        text = _text(message.get("content"))
        role = message.get("role")
        for call in message.get("tool_calls") or []:
            called[call["id"]] = call["function"]["name"]
        if index == 0 and summary is not None and role in ("system", "user"):
            reading.read(text, ", ".join(summary) if summary else None)
        elif role == "tool":
            name = called.get(message.get("tool_call_id", ""), "?")
            tool = registry.get(name)
            # A relayed result (a skill's run, a batch, a snippet) passes outside content on
            # marked: one with no marker relayed only trusted results.
            relayed_outside = tool is not None and tool.relays and UNTRUSTED_CLOSE in text
            outside = tool is None or tool.untrusted or relayed_outside
            source = name if outside else None
            kind = tool.offers if tool is not None else "page"
            failed = _unmarked(text).startswith(ERROR)
            relayed = tool is None or tool.relays
            reading.read(text, source, kind, failed=failed, relayed=relayed)
        elif role == "user" and index == len(messages) - 1 and asked_from is not None:
            reading.read(text, asked_from)
        elif role == "user" and written_by_model:
            continue
        elif role == "user" and UNTRUSTED_CLOSE not in text:  # most are: no pattern to run
            reading.owner.append(text)
        elif role == "user":
            reading.owner.append(MARKED.sub("", text))
            for source, marked in SOURCED.findall(text):
                # A forwarded message offers its links as a mail does; an earlier report
                # as the page it came from.
                kind = "message" if source.startswith(FORWARDED) else "page"
                reading.read(marked, source, kind)


def _unmarked(text: str) -> str:
    opened = OPENED.match(text)
    return text[opened.end() :].lstrip("\n") if opened else text


def _text(content: Any) -> str:
    found = history.text_only(content)
    return found if isinstance(found, str) else ""
