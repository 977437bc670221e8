"""`task` (docs/reference/execution.md#subagents): hand a piece of work to a subagent of
`[agents.NAME]`.

The tool gets the model at construction (it sits in the agent layer, above the executor).
Its own call is audited under the caller's origin; the subagent's calls under `task:NAME`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from augure.agent.context import first_sentence
from augure.agent.subagent import run_subagent
from augure.config.agents import AgentsConfig
from augure.llm.models import ChatModel
from augure.tools.base import RunContext, Running, Tool, ToolResult

NAME = "task"


def summary(instructions: str) -> str:
    """The first sentence of an agent's instructions: how the model sees it in the list."""
    return first_sentence(" ".join(instructions.split()))


def task_tool(agents: AgentsConfig, llm: ChatModel) -> Tool | None:
    """The `task` tool over the configured agents; None when there is none to offer."""
    named = agents.named
    if not named:
        return None
    default = agents.chosen(None)
    listing = "".join(
        f"\n- {name}: {summary(spec.instructions)}{' (default)' if name == default else ''}"
        for name, spec in named.items()
    )

    async def task(ctx: RunContext, prompt: str, agent: str | None = None) -> ToolResult:
        chosen = agents.chosen(agent)
        assert chosen is not None  # there is at least one agent, and `agent` was validated
        return await run_subagent(chosen, named[chosen], prompt, ctx, llm)

    def params() -> type[BaseModel]:
        names: Any = Literal[tuple(named)]
        fields: dict[str, Any] = {"prompt": (str, ...), "agent": (names | None, None)}
        return create_model("task_params", __config__=ConfigDict(extra="forbid"), **fields)

    return Tool(
        name=NAME,
        description="Hand work to a subagent: it sees only the prompt (no chat history), "
        f"works with its own tools and returns its answer. Agents:{listing}",
        model=params,
        function=task,
        # Never behind the executor's lock for writes: the subagent's own writes take it one
        # by one, and holding it for the whole run would deadlock the first of them. Several
        # tasks of one response run side by side. Approvals inside may each wait for the
        # owner: the budget is the agent's max_loops, not the timeout.
        running=Running(timeout=3600.0, mode="stateful", safe=True, background=True),
        relays=True,  # the answer may pass on outside content the subagent read
    )
