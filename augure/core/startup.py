"""The one line `augure run` logs once it is up: who the bot is, which model, which tools."""

from __future__ import annotations

from collections.abc import Sequence

from augure import __version__
from augure.config.settings import Config
from augure.tools.base import Tool


def summary(config: Config, tools: Sequence[Tool], username: str | None) -> str:
    """e.g. `Augure 0.1.0 as @my_bot: model gpt-4o-mini; 14 tools ready; not configured:
    email (set [tools.email] host), github (run pip install 'augure[github]')`.

    Names and what to set only: a tool's check never quotes a configured value.
    """
    ready: list[str] = []
    missing: list[str] = []
    for tool in tools:
        problem = tool.config_check(config)
        if problem is None:
            ready.append(tool.name)
        else:
            missing.append(f"{tool.name} ({problem})")
    who = f"@{username}" if username else "an unnamed bot"
    line = f"Augure {__version__} as {who}: model {config.llm.model}; {len(ready)} tools ready"
    return f"{line}; not configured: {', '.join(missing)}" if missing else line
