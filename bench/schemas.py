"""Schema tokens per request as tools grow, with and without deferral (`load_tools`).

The synthetic tools are shaped like a real multi-action integration (an action enum and a
dozen optional parameters). Deferred tools cost one line each in the system prompt.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Literal

from pydantic import Field

from augure.agent.context import first_sentence
from augure.core.toolset import builtin_tools
from augure.tools.base import Egress, RunContext, Tool, tool

Action = Literal["list", "get", "create", "update", "comment", "search", "close", "merge"]


@tool("integration", egress=Egress.READ_ONLY)
async def integration(
    ctx: RunContext,
    action: Annotated[Action, Field(description="what to do")],
    owner: str | None = None,
    repo: str | None = None,
    number: int | None = None,
    title: str | None = None,
    body: str | None = None,
    state: Literal["open", "closed", "all"] | None = None,
    labels: list[str] | None = None,
    query: Annotated[str | None, Field(description="search terms")] = None,
    per_page: Annotated[int, Field(ge=1, le=100)] = 30,
) -> str:
    """Work with an outside service: list, read, create and update its items. Writes ask first."""
    return action


def tokens(tools: list[Tool]) -> int:
    schemas = [
        {"type": "function", "function": {"name": t.name, "description": t.description,
                                          "parameters": t.parameters}}
        for t in tools if not t.deferred
    ]  # fmt: skip
    listing = "\n".join(f"- {t.name}: {first_sentence(t.description)}" for t in tools if t.deferred)
    return (len(json.dumps(schemas)) + len(listing)) // 4


def main() -> None:
    core = builtin_tools()
    print("schema tokens per request (chars/4), built-in tools plus N integrations:")
    print(f"{'N':>4} {'all schemas sent':>18} {'integrations deferred':>23}")
    for count in (0, 5, 10, 20, 40):
        extra = [dataclasses.replace(integration, name=f"integration_{n}") for n in range(count)]
        deferred = [dataclasses.replace(t, deferred=True) for t in extra]
        print(f"{count:>4} {tokens(core + extra):>18} {tokens(core + deferred):>23}")


if __name__ == "__main__":
    main()
