"""What one turn spent: tokens counted by the model's usage, split into estimated parts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from augure.agent import history
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
    ) -> TurnUsage:
        """The turn's usage; the split (for /usage) is an estimate at ~4 characters a token."""
        return TurnUsage(
            model=model,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            llm_calls=self.calls,
            breakdown={
                "system_prompt": (len(system) - memory_chars) // 4,
                "memory": memory_chars // 4,
                "tool_schemas": len(json.dumps(schemas)) // 4,
                "history": history.estimate_tokens(messages),
                "output": len(output) // 4,
            },
        )
