"""Keeping a conversation under `agent.history_tokens`: shorten old tool results, then
summarise the oldest turns. The summary of outside content stays marked untrusted, and so
does a summary of that summary: the conversation keeps the summary's sources as data."""

from __future__ import annotations

import logging
from typing import Any

from augure.agent import history
from augure.agent.tally import Tally
from augure.llm.faults import LLMError
from augure.llm.models import ChatModel
from augure.llm.spend import SUMMARY, working_as
from augure.store.state import Store
from augure.tools.registry import ToolRegistry, outside_sources
from augure.tools.result import wrap_untrusted

log = logging.getLogger(__name__)


async def compact(
    conversation: history.Conversation,
    limit: int,
    llm: ChatModel,
    store: Store,
    tally: Tally,
    registry: ToolRegistry,
) -> None:
    """The newest message is the owner's, just asked and stored: never compacted away."""
    messages, newest = conversation.messages[:-1], conversation.messages[-1]
    if history.estimate_tokens(messages, sizes=conversation.sizes) <= limit:
        return
    messages = history.shorten_tool_results(messages)
    summarised: list[str] | None = None
    if history.estimate_tokens(messages, sizes=conversation.sizes) > limit:
        older, recent = history.split_for_summary(messages, limit // 2)
        if older:
            try:
                with working_as(SUMMARY):  # billed as a summary, sent to [llm.roles] summary
                    summary = await llm.complete(
                        [
                            {"role": "system", "content": history.SUMMARY_PROMPT},
                            {"role": "user", "content": history.transcript(older)},
                        ]
                    )
            except LLMError as exc:
                log.warning("could not summarise the history: %s", exc)
            else:
                tally.add(summary)
                summarised = _sources(conversation, older, registry)
                messages = [_summary_message(summary.content or "", summarised), *recent]
    conversation.messages = [*messages, newest]
    await store.replace_messages(conversation.id, conversation.messages, summarised)
    if summarised is not None:
        conversation.summary_sources = summarised


def _sources(
    conversation: history.Conversation, older: list[dict[str, Any]], registry: ToolRegistry
) -> list[str]:
    """The outside sources of what is being summarised: the tools called in it, and those
    of the earlier summary it begins with (always the first message, when there is one)."""
    found = set(outside_sources(older, registry))
    if conversation.summary_sources is not None:
        found.update(conversation.summary_sources)
    return sorted(found)


def _summary_message(text: str, sources: list[str]) -> dict[str, Any]:
    """A summary of outside content is outside content: marked, and never a system message
    (the most trusted place of every later request)."""
    if not sources:
        return {"role": "system", "content": f"Summary of the earlier conversation:\n{text}"}
    marked = wrap_untrusted(text, "summary of " + ", ".join(sources))
    return {"role": "user", "content": f"[Summary of the earlier conversation:]\n{marked}"}
