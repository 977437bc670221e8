"""What one turn spent: tokens counted by the model's usage, split into counted parts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from augure.agent import history, tokens
from augure.llm.client import LLMResponse
from augure.store.state import TurnUsage


@dataclass
class Tally:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    model: str = ""  # the model that gave the last answer (a fallback's, a role's)

    def add(self, response: LLMResponse) -> None:
        self.prompt_tokens += response.prompt_tokens
        self.completion_tokens += response.completion_tokens
        self.calls += 1
        self.model = response.model or self.model

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def usage(
        self,
        model: str,
        system: str,
        memory_chars: int,
        schemas: list[Any],
        output: str,
        messages: list[dict[str, Any]],
        encoding: tokens.Choice = tokens.DEFAULT,
        sizes: history.Sizes | None = None,
    ) -> TurnUsage:
        """The turn's usage; the split (for /usage) is counted by the tokenizer where one
        loaded, else estimated at ~4 characters a token. `sizes`: the conversation's memo of
        its messages' sizes."""
        coder = tokens.resolve(encoding)
        prompt = tokens.count(system, coder)
        # Memory is a slice of the system prompt: its share of the tokens, by characters.
        memory = prompt * memory_chars // len(system) if system else 0
        return TurnUsage(
            model=self.model or model,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            llm_calls=self.calls,
            breakdown={
                "system_prompt": prompt - memory,
                "memory": memory,
                "tool_schemas": _schema_tokens(schemas, coder),
                "history": history.estimate_tokens(messages, coder, sizes),
                "output": tokens.count(output, coder),
            },
        )


# The same few schema lists come back turn after turn (the registry builds them once); their
# JSON is the largest part of a request, and encoding it each turn only to count it cost more
# than the rest of the usage. Keyed by the schemas' identities; the entry holds them, so an
# id cannot be reused while it is kept.
_SCHEMA_MEMO_SIZE = 32
_schema_memo: dict[tuple[object, tuple[int, ...]], tuple[list[Any], int]] = {}


def _schema_tokens(schemas: list[Any], coder: tokens.Encoding | None) -> int:
    key = (coder, tuple(map(id, schemas)))
    known = _schema_memo.get(key)
    if known is None:
        if len(_schema_memo) >= _SCHEMA_MEMO_SIZE:
            _schema_memo.clear()
        known = _schema_memo[key] = (list(schemas), tokens.count(json.dumps(schemas), coder))
    return known[1]
