"""Optional libraries: which pip extra brings each tool's library, checked without importing it.

Playwright, PyGithub, imapclient, caldav, Tavily and pydantic-monty cost start-up time and memory
that most turns never use, so they are extras (`pip install 'augure[browser]'`, or
`augure[all]`) imported by their tool on first use. A tool whose library is absent is still
listed, `[NOT CONFIGURED]` with the command to run, and a call returns that command as its
error instead of failing on an import deep inside the tool.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from augure.config.settings import Config
    from augure.tools.base import RunContext, Tool, ToolResult


def install_hint(extra: str) -> str:
    return f"run pip install 'augure[{extra}]'"


def installed(module: str) -> bool:
    # find_spec reads the file system only: the library itself stays unimported.
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or half-removed install counts as absent
        return False


@dataclass(frozen=True)
class Requirement:
    extra: str
    modules: tuple[str, ...]
    # Some tools need their library only in one configuration (Tavily, not Exa or SearXNG).
    applies: Callable[[Config], bool] = lambda config: True

    def missing(self, config: Config) -> str | None:
        if not self.applies(config) or all(installed(m) for m in self.modules):
            return None
        return install_hint(self.extra)


def _uses_tavily(config: Config) -> bool:
    return str(config.tools.section("web_search").get("provider", "tavily")) == "tavily"


REQUIREMENTS: dict[str, Requirement] = {
    "browser": Requirement("browser", ("playwright",)),
    "github": Requirement("github", ("github",)),
    "email": Requirement("email", ("imapclient", "markdownify")),
    "calendar": Requirement("calendar", ("caldav", "icalendar", "recurring_ical_events")),
    "web_search": Requirement("search", ("tavily",), _uses_tavily),
    "execute_code": Requirement("code", ("pydantic_monty",)),
}


def available(tool: Tool) -> Tool:
    """`tool` itself when its library is installed, else a stand-in that says what to install.

    The stand-in keeps the name, description and schema, so the model still knows the tool
    exists and the owner sees what to run.
    """
    requirement = REQUIREMENTS.get(tool.name)
    if requirement is None or all(installed(m) for m in requirement.modules):
        return tool
    own_check = tool.check
    own_function = tool.function

    def check(config: Config) -> str | None:
        return requirement.missing(config) or (own_check(config) if own_check else None)

    async def refuse(ctx: RunContext, **arguments: Any) -> ToolResult | str:
        from augure.tools.base import ToolResult

        missing = requirement.missing(ctx.config)
        if missing:
            return ToolResult.error(f"{tool.name} is not installed: {missing}")
        return await own_function(ctx, **arguments)

    return dataclasses.replace(tool, check=check, function=refuse)
