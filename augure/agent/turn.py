"""The shapes a turn is made of: what it needs of the model and the channel, what it returns."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from augure.agent import history
from augure.agent.context import SystemPrompt
from augure.agent.sources import sources_of
from augure.agent.tally import Tally
from augure.common.caller import Caller, Grants
from augure.common.content import Content
from augure.common.ports import Sources
from augure.store.state import TurnUsage
from augure.tools.base import Artifact, RunContext

# Done instead of closing a chat's conversation, with its turns held off (a forget).
Wipe = Callable[[str], Awaitable[object]]
# The owner's messages that arrived while the turn ran, with their inbox ids, or None.
Later = Callable[[], tuple[list[Content], list[int]] | None]


class TurnStream(Protocol):
    """A channel's view of a turn as it happens (streaming previews)."""

    async def text(self, delta: str) -> None:
        """A piece of the model's answer."""

    async def restart(self) -> None:
        """A new model call begins: text shown so far was a step, not the answer."""


@dataclass
class Reply:
    text: str
    artifacts: list[Artifact] = field(default_factory=list)
    usage: TurnUsage | None = None
    turn_id: str | None = None
    # The outside content its words drew on, for the channel to show (none by default).
    sources: Sources = field(default_factory=Sources)


@dataclass(frozen=True)
class Carried:
    """What the unit that wrote a turn's message had read, when that unit was not the owner
    in their chat: the outside sources of the turn that made a job, the fetches of the turn
    that released background work. The turn starts from them (docs/security.md, "No
    deferred leak"); with sources, its message is not taken as the owner's words."""

    sources: tuple[str, ...] = ()
    fetches: int = 0


NOTHING_CARRIED = Carried()  # the owner's own message in their chat


@dataclass(frozen=True)
class Turn:
    id: str
    chat_id: str
    caller: Caller  # who the turn works for; its calls extend this
    awaits_delivery: bool
    asked_from: str | None = None  # the message is outside content from this source
    received: tuple[int, ...] = ()  # its messages' inbox rows, consumed as it begins
    carried: Carried = NOTHING_CARRIED
    later: Later | None = None  # follow-ups taken in before each further model call

    @property
    def origin(self) -> str:
        return self.caller.origin


@dataclass
class TurnState:
    """What one turn has gathered so far, shared by its steps."""

    turn: Turn
    conversation: history.Conversation
    system: SystemPrompt
    ctx: RunContext
    stream: TurnStream | None
    allowed: frozenset[str] | None
    # Where the turn's own messages are (position -> their stored, text-only copy): what the
    # model saw in their place (images, the time) goes once the turn is answered.
    asked: dict[int, dict[str, Any]]
    loaded: set[str]
    schemas: list[dict[str, Any]]
    tally: Tally
    artifacts: list[Artifact] = field(default_factory=list)
    mistaken: set[str] = field(default_factory=set)  # calls pruned once the model saw them
    clock: dict[str, Any] = field(default_factory=dict)  # the time, sent before the newest

    def request(self) -> list[dict[str, Any]]:
        """The system prompt, the history, and the time just before the turn's newest message:
        what changes every turn comes after what a provider can cache
        (docs/prompt-economy.md)."""
        messages = [self.system.as_message(), *self.conversation.messages]
        messages.insert(max(self.asked) + 1, self.clock)  # +1: after the system prompt
        return messages

    def usage(self, model: str, answer: str) -> TurnUsage | None:
        """What the turn's model calls cost, split by part of the request; None if it made
        none."""
        if not self.tally.calls:
            return None
        conversation = self.conversation
        return self.tally.usage(
            model,
            self.system.text,
            self.system.memory_chars,
            self.schemas,
            answer,
            conversation.messages,
            sizes=conversation.sizes,
        )

    def sources(self) -> Sources:
        """What outside content the answer drew on: all the conversation the model read."""
        return sources_of(self.ctx.caller.reading, self.conversation.messages)


def working_for(
    origin: str | Sequence[str] | Caller,
    chat_id: str,
    tools: Collection[str] | None,
    grants: Mapping[str, Grants],
) -> Caller:
    """Who a turn works for. A caller given whole (a background report's) is kept as it is,
    grants and all; otherwise one is made from the origin chain, with the chat's `Allow in
    this chat` grants when the owner's chat started it, never a job's or a skill's."""
    if isinstance(origin, Caller):
        return origin
    caller = Caller.of(origin, chat_id=chat_id, allowed_tools=tools)
    chatting = caller.started_by == "chat"
    return dataclasses.replace(caller, grants=grants[chat_id] if chatting else None)
