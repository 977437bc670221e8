"""Keeping a conversation under `agent.history_tokens`: shorten old tool results, then
summarise the oldest turns. The summary of outside content stays marked untrusted."""

from __future__ import annotations

import logging

from augure.agent import history
from augure.agent.tally import Tally
from augure.agent.turn import ChatModel
from augure.llm import LLMError
from augure.store.db import Store
from augure.tools.executor import outside_sources
from augure.tools.registry import ToolRegistry
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
    if history.estimate_tokens(messages, sizes=conversation.sizes) > limit:
        older, recent = history.split_for_summary(messages, limit // 2)
        if older:
            try:
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
                text = summary.content or ""
                # A summary of outside content is outside content: it keeps its marking.
                sources = outside_sources(older, registry)
                if sources:
                    text = wrap_untrusted(text, "summary of " + ", ".join(sources))
                note = f"Summary of the earlier conversation:\n{text}"
                messages = [{"role": "system", "content": note}, *recent]
    conversation.messages = [*messages, newest]
    await store.replace_messages(conversation.id, conversation.messages)
