"""`[guests]`: what a guest's chat may reach beyond the default (docs/security.md, "Guests").

Every allowed user other than `[telegram] owner` is a guest. In a guest's chat, and in a group
(whoever writes there, everyone in it reads the answers), the owner's private things are not
offered: the tools below, and the memory files in the system prompt. `tools` opens tools by
glob, `memory` opens the notes (in the prompt and through the memory tools).
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from pydantic import BaseModel, ConfigDict

# The owner's notes, accounts and set-up. Skills and jobs are the owner's work: a job runs as
# the owner's (with the owner's tools), so `schedule` is not a guest's unless opened.
OWNERS_TOOLS = (
    "memory_read",
    "memory_write",
    "email",
    "calendar",
    "github",
    "mcp__*",
    "schedule",
    "create_skill",
    "list_skills",
    "run_skill",
    "manage_skill",
    "install_skill",
    PRESETS := "http:preset",  # `http` with a preset: the owner's API credentials
)
MEMORY_TOOLS = ("memory_read", "memory_write")


class GuestsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Globs of tools offered to guests besides the default set, e.g. ["github", "mcp__weather__*"].
    tools: list[str] = []
    # The owner's memory files in a guest's prompt, and the memory tools offered there.
    memory: bool = False

    def offers(self, tool: str) -> bool:
        """Whether a guest's chat is offered `tool`."""
        if self.memory and tool in MEMORY_TOOLS:
            return True
        if any(fnmatchcase(tool, pattern) for pattern in self.tools):
            return True
        return not any(fnmatchcase(tool, pattern) for pattern in OWNERS_TOOLS)
