"""What one turn spent: tokens counted by the model's usage, split into counted parts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from augure.agent import history, tokens
from augure.llm import LLMResponse
from augure.store.db import TurnUsage


@dataclass
class Tally:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    def add(self, response: LLMResponse) -> None:
        self.prompt_tokens += response.prompt_tokens
        self.completion_tokens += response.completion_tokens
        self.calls += 1

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
    ) -> TurnUsage:
        """The turn's usage; the split (for /usage) is counted by the tokenizer where one
        loaded, else estimated at ~4 characters a token."""
        coder = tokens.resolve(encoding)
        prompt = tokens.count(system, coder)
        # Memory is a slice of the system prompt: its share of the tokens, by characters.
        memory = prompt * memory_chars // len(system) if system else 0
        return TurnUsage(
            model=model,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            llm_calls=self.calls,
            breakdown={
                "system_prompt": prompt - memory,
                "memory": memory,
                "tool_schemas": tokens.count(json.dumps(schemas), coder),
                "history": history.estimate_tokens(messages, coder),
                "output": tokens.count(output, coder),
            },
        )
