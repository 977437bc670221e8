"""Conversation history as the model sees it, loaded from and saved to the store."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from augure.agent import tokens
from augure.store.state import Store

INTERRUPTED = "Error: this call was interrupted (the assistant restarted) and did not complete."


class Sizes:
    """Each message's size for `estimate_tokens`, remembered. A conversation's whole history
    is estimated twice a turn (to decide on compaction, then for /usage); measuring only the
    messages added since keeps a turn's cost from growing with the chat. Messages are never
    changed in place once in a history (a change replaces the dict), so the same dict always
    has the same size; the dict itself is held so its id stays its own."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[dict[str, Any], int]] = {}
        self._coder: tokens.Encoding | None = None
        # The last list measured and its total: the next one usually extends it.
        self._last: list[dict[str, Any]] = []
        self._last_total = 0

    def measure(self, messages: list[dict[str, Any]], coder: tokens.Encoding | None) -> int:
        """The sum of the messages' sizes: characters without a tokenizer, else tokens."""
        if coder is not self._coder:
            self._known, self._coder, self._last = {}, coder, []
        start, total = _extends(messages, self._last), 0
        if start:
            total = self._last_total
        for message in messages[start:]:
            total += self._size(message, coder)
        self._last, self._last_total = list(messages), total
        # Messages compacted away or replaced (one a turn: the owner's, once answered) are
        # forgotten, so the memo stays the history's size; pruned every few dozen turns,
        # since the rebuild is itself a walk.
        if len(self._known) > len(messages) + 64:
            self._known = {id(m): (m, self._size(m, coder)) for m in messages}
        return total

    def _size(self, message: dict[str, Any], coder: tokens.Encoding | None) -> int:
        entry = self._known.get(id(message))
        if entry is None or entry[0] is not message:
            entry = self._known[id(message)] = (message, _size(message, coder))
        return entry[1]


def _extends(messages: list[dict[str, Any]], earlier: list[dict[str, Any]]) -> int:
    """len(earlier) if `messages` starts with it, else 0. The comparison runs in C and
    settles each pair by identity before looking at contents."""
    return len(earlier) if messages[: len(earlier)] == earlier else 0


@dataclass
class Conversation:
    id: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    sizes: Sizes = field(default_factory=Sizes, repr=False, compare=False)
    # The first message is a summary of earlier turns; these are the outside sources it
    # drew on (empty: none). None: there is no summary.
    summary_sources: list[str] | None = None
    # What `loaded_tools` found, and in which messages: each turn reads only the new ones.
    _scanned: list[dict[str, Any]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )
    _loaded: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    def loaded_tools(self) -> set[str]:
        """Deferred tools the model loaded earlier in this conversation."""
        start = _extends(self.messages, self._scanned)
        if not start:
            self._loaded = set()
        for message in self.messages[start:]:
            for call in message.get("tool_calls") or []:
                if call["function"]["name"] == "load_tools":
                    try:
                        arguments = json.loads(call["function"]["arguments"])
                        self._loaded.update(arguments.get("names", []))
                    except (ValueError, AttributeError, TypeError):
                        continue
        self._scanned = list(self.messages)
        return set(self._loaded)


async def load(store: Store, chat_id: str) -> Conversation:
    conversation_id = await store.open_conversation(chat_id)
    messages = repair(await store.messages(conversation_id))
    conversation = Conversation(conversation_id, messages)
    conversation.summary_sources = await store.summary_sources(conversation_id)
    return conversation


def repair(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every tool call a result, so a crash mid-turn cannot poison the next request."""
    repaired: list[dict[str, Any]] = []
    waiting: list[str] = []
    for message in messages:
        if message["role"] != "tool" and waiting:
            repaired += [
                {"role": "tool", "tool_call_id": i, "content": INTERRUPTED} for i in waiting
            ]
            waiting = []
        if message["role"] == "tool":
            if message.get("tool_call_id") not in waiting:
                continue  # an orphan result: the API refuses it
            waiting.remove(message["tool_call_id"])
        repaired.append(message)
        if message["role"] == "assistant":
            waiting = [call["id"] for call in message.get("tool_calls") or []]
    repaired += [{"role": "tool", "tool_call_id": i, "content": INTERRUPTED} for i in waiting]
    return repaired


def prune(messages: list[dict[str, Any]], call_ids: set[str]) -> list[dict[str, Any]]:
    """Drop the given tool calls and their results; an assistant message left empty goes too."""
    kept: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "tool" and message.get("tool_call_id") in call_ids:
            continue
        calls = message.get("tool_calls")
        if calls:
            remaining = [call for call in calls if call["id"] not in call_ids]
            if not remaining and not message.get("content"):
                continue
            message = (
                {**message, "tool_calls": remaining}
                if remaining
                else {key: value for key, value in message.items() if key != "tool_calls"}
            )
        kept.append(message)
    return kept


# -- compaction ----------------------------------------------------------------------------

SHORT_RESULT = 300  # characters an old tool result keeps
SUMMARY_PROMPT = (
    "Summarise the conversation below for your own later reference: the owner's requests, "
    "decisions, facts learned, results of tool calls that matter, and anything left open. "
    "Be concise and concrete; keep names, numbers, dates and ids."
)


# Tokens a provider adds to every message for its role and separators (OpenAI documents 3).
# Without them a long chat of short messages was estimated at a fraction of its real size and
# never compacted, so every request carried, and every turn re-sent, the whole of it.
MESSAGE_TOKENS = 3


def estimate_tokens(
    messages: list[dict[str, Any]],
    encoding: tokens.Choice = tokens.DEFAULT,
    sizes: Sizes | None = None,
) -> int:
    """Tokens of the messages plus each message's framing: counted by the tokenizer where
    one loaded (agent/tokens.py), else about 4 characters a token. Runs every turn over the
    whole history, so plain strings are measured directly rather than JSON-encoded, and
    `sizes` (the conversation's) measures each message once."""
    framing = len(messages) * MESSAGE_TOKENS
    coder = tokens.resolve(encoding)
    if sizes is not None:
        total = sizes.measure(messages, coder)
    else:
        total = sum(_size(message, coder) for message in messages)
    return (total // tokens.CHARS_PER_TOKEN if coder is None else total) + framing


def _size(message: dict[str, Any], coder: tokens.Encoding | None) -> int:
    """Characters without a tokenizer (the division comes once, over the sum), else tokens."""
    if coder is None:
        return _chars(message)
    return sum(tokens.count(part, coder) for part in _parts(message))


def _parts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    parts = [content if isinstance(content, str) else json.dumps(content or "")]
    calls = message.get("tool_calls")
    return [*parts, json.dumps(calls)] if calls else parts


def _chars(message: dict[str, Any]) -> int:
    return sum(map(len, _parts(message)))


def shorten_tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results of earlier turns are the cheapest thing to lose: keep their beginning.
    The latest turn's results stay whole; the model may still be working from them."""
    owner_turns = [i for i, m in enumerate(messages) if m["role"] == "user"]
    cut = owner_turns[-1] if owner_turns else 0
    shortened = []
    for index, message in enumerate(messages):
        content = message.get("content")
        old = index < cut and message["role"] == "tool"
        if old and isinstance(content, str) and len(content) > SHORT_RESULT:
            content = f"{content[:SHORT_RESULT]}… [shortened from {len(content)} characters]"
            message = {**message, "content": content}
        shortened.append(message)
    return shortened


def split_for_summary(
    messages: list[dict[str, Any]], keep_tokens: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(older, recent): recent starts at an owner message, so no tool call is ever separated
    from its result, and holds as many whole turns as fit in `keep_tokens`."""
    starts = [i for i, m in enumerate(messages) if m["role"] == "user" and i > 0]
    # One pass from the end (estimating each candidate tail afresh was quadratic: a third of
    # a second for a 4,000-message history, on the turn that compacts it).
    tail_chars = [0] * (len(messages) + 1)
    for index in range(len(messages) - 1, -1, -1):
        tail_chars[index] = tail_chars[index + 1] + _chars(messages[index])
    for start in starts:
        tail = tail_chars[start] // 4 + (len(messages) - start) * MESSAGE_TOKENS
        if tail <= keep_tokens:
            return messages[:start], messages[start:]
    last = starts[-1] if starts else len(messages)
    return messages[:last], messages[last:]


def transcript(messages: list[dict[str, Any]]) -> str:
    lines = []
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if message["role"] == "assistant" and message.get("tool_calls"):
            calls = ", ".join(
                f"{c['function']['name']}({c['function']['arguments']})"
                for c in message["tool_calls"]
            )
            text = f"{text or ''} [called {calls}]".strip()
        lines.append(f"{message['role']}: {text}")
    return "\n".join(lines)


# -- images ----------------------------------------------------------------------------------

NO_VISION = "[The owner sent an image, but this model cannot see images.]"


def has_images(messages: list[dict[str, Any]]) -> bool:
    return any(
        isinstance(m.get("content"), list)
        and any(part.get("type") == "image_url" for part in m["content"])
        for m in messages
    )


def text_only(content: Any, image_note: str = "[image]") -> Any:
    if not isinstance(content, list):
        return content
    parts = [part.get("text", "") if part.get("type") == "text" else image_note for part in content]
    return "\n".join(part for part in parts if part)


def show_asked(
    messages: list[dict[str, Any]], stored: list[dict[str, Any]], asked: list[Any]
) -> dict[int, dict[str, Any]]:
    """Puts a turn's messages as the model sees them (`asked`: images included) where their
    stored copies are in `messages`; returns position -> stored copy, to put back once the
    turn is answered. Found by identity: compaction may have summarised an older one away,
    never the newest. Searched from the end, where they are, not through the whole history
    on every turn."""
    which = {id(message): n for n, message in enumerate(stored)}
    shown: dict[int, dict[str, Any]] = {}
    for position in range(len(messages) - 1, -1, -1):
        if len(shown) == len(stored):
            break
        message = messages[position]
        n = which.get(id(message))
        if n is None or stored[n] is not message:
            continue
        messages[position] = {"role": "user", "content": asked[n]}
        shown[position] = message
    return shown


def without_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": text_only(m.get("content"), NO_VISION)}
        if isinstance(m.get("content"), list)
        else m
        for m in messages
    ]
