"""`[agents]`: the subagents the `task` tool runs (docs/reference/execution.md#subagents), beside
the config that holds them."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from augure.config.spend import Prices

AGENT_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")


class AgentSpec(Prices):
    """`[agents.NAME]`: a subagent the `task` tool runs (docs/reference/execution.md#subagents).
    Its prices are those of its own `model` (docs/reference/spend.md#prices-of-every-model)."""

    instructions: str
    model: str | None = None  # unset: [llm] model
    # Glob patterns over tool names; none by default: an agent reaches only what it is given.
    tools: list[str] = Field(default_factory=list)
    max_loops: int = Field(default=8, ge=1, le=100)


class AgentsConfig(BaseModel):
    """`[agents]` holds `default` and one table per agent, `[agents.NAME]`."""

    model_config = ConfigDict(extra="allow")
    # Free-form tables named by the owner: validated as AgentSpec, listed by the template.
    NAMED_TABLES: ClassVar[type[BaseModel]] = AgentSpec
    __pydantic_extra__: dict[str, AgentSpec] = Field(init=False)

    default: str | None = None  # unset: the first agent listed

    @model_validator(mode="before")
    @classmethod
    def _tables_only(cls, data: Any) -> Any:
        # A plain key beside `default` is a typo of a key, not an agent.
        for key, value in data.items() if isinstance(data, dict) else []:
            if key in cls.model_fields:
                continue
            if not isinstance(value, dict | AgentSpec):
                # difflib loads only for an error's "did you mean" (docs/performance.md).
                import difflib

                close = difflib.get_close_matches(key, list(cls.model_fields), n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                raise ValueError(f"unknown key {key!r}{hint} (an agent is a table [agents.NAME])")
            if not AGENT_NAME.fullmatch(key):
                raise ValueError(f"agent name {key!r}: letters, digits, - and _ only, at most 32")
        return data

    @model_validator(mode="after")
    def _default_is_an_agent(self) -> AgentsConfig:
        if self.default is not None and self.default not in self.named:
            known = ", ".join(self.named) or "none is configured"
            raise ValueError(f"default {self.default!r} is not an [agents.NAME] table ({known})")
        return self

    @property
    def named(self) -> dict[str, AgentSpec]:
        return dict(self.__pydantic_extra__ or {})

    def chosen(self, name: str | None) -> str | None:
        """The agent a `task` call runs: `name`, else `default`, else the first listed."""
        return name or self.default or next(iter(self.named), None)
