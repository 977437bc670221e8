"""What a turn is offered: its tools' schemas, and in a guest's chat only the guest's tools.

In a guest's chat (docs/security.md, "Guests") the turn's allowed tools are narrowed to what
`[guests]` offers, so the owner's private tools are neither sent to the model nor run if it
calls them anyway: the executor's scope gate refuses what the caller does not allow.
"""

from __future__ import annotations

from typing import Any

from augure.agent.context import SystemPrompt, build_system_prompt
from augure.codemode.tool import code_mode_schema
from augure.config.settings import Config
from augure.memory.store import MemoryStore
from augure.tools.registry import ToolRegistry


def guest_tools(config: Config, registry: ToolRegistry, chat_id: str) -> frozenset[str] | None:
    """The tools offered in `chat_id` when it is a guest's (or a group); None in the owner's
    chats, where nothing is narrowed."""
    if not config.guest_chat(chat_id):
        return None
    return frozenset(t.name for t in registry.list() if config.guests.offers(t.name))


def narrowed(allowed: frozenset[str] | None, guest: frozenset[str] | None) -> frozenset[str] | None:
    """A turn's allowed tools (a skill's declared ones, or all when None) within a guest
    chat's tools (None: the owner's chat, nothing narrowed)."""
    if guest is None:
        return allowed
    return guest if allowed is None else guest & allowed


def schemas(
    config: Config,
    registry: ToolRegistry,
    chat_id: str,
    loaded: set[str],
    allowed: frozenset[str] | None,
) -> list[dict[str, Any]]:
    """The schemas a turn of `chat_id` sends. Allowed tools that are a skill's own (not merely
    a guest chat's narrowing) are sent whole, loaded or not; otherwise they only narrow what a
    turn is usually sent."""
    if allowed is not None and allowed != guest_tools(config, registry, chat_id):
        return [registry.schema(t) for t in registry.list() if t.name in allowed]
    # Code mode offers one tool whose description carries every tool as a typed `api.*`
    # function: one model call can then chain several tools.
    if config.code_mode.enabled:
        return [code_mode_schema(registry, allowed)]
    sent = registry.to_function_schemas(loaded)
    return sent if allowed is None else [s for s in sent if s["function"]["name"] in allowed]


def system_prompt(
    config: Config,
    registry: ToolRegistry,
    memory: MemoryStore,
    catalog: str,
    persona: str,
    allowed: frozenset[str] | None,
    guest: frozenset[str] | None,
) -> SystemPrompt:
    """The turn's system prompt: hints and deferred tools of what it is offered only; the
    owner's notes stay out of a guest's chat unless `[guests] memory` opens them."""
    return build_system_prompt(
        config,
        memory if guest is None or config.guests.memory else None,
        registry.hints(allowed),
        [] if config.code_mode.enabled else registry.deferred(allowed),
        catalog,
        persona,
        guest=guest is not None,
    )
