"""Messages the owner sends while a turn works through tools (docs/telegram.md, "Follow-ups
and albums"): taken into that turn before its next model call, so one answer covers them,
instead of a further turn answering them after it."""

from __future__ import annotations

from collections.abc import Callable

from augure.agent import history
from augure.agent.turn import TurnState
from augure.common.content import Content
from augure.store.state import Store


async def take_later(state: TurnState, store: Store, clean: Callable[[Content], Content]) -> None:
    """Stored with the turn, and out of the inbox, in one transaction before the model sees
    them; the model then reads them as it reads the turn's first messages (images for this
    turn only, the time just before the newest)."""
    more = state.turn.later() if state.turn.later is not None else None
    if not more:
        return
    contents, received = more
    asked = [clean(content) for content in contents]
    stored = [{"role": "user", "content": history.text_only(c)} for c in asked]
    await store.add_messages(state.conversation.id, stored, received=received)
    state.conversation.messages.extend(stored)
    state.asked |= history.show_asked(state.conversation.messages, stored, asked)
