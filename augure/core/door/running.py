"""What only a running core answers: `/status`, its tools, a tool run by hand from the shell
(`augure tools run`, `augure skills run`), its skill service (docs/architecture.md, "The
door")."""

from __future__ import annotations

import time
from typing import Any

from augure import __version__
from augure.common.caller import Caller
from augure.core.app import Core
from augure.core.door.owner import OwnerDesk
from augure.core.door.types import StatusReport, ToolResult
from augure.skills.service import SkillService


class RunningDesk:
    def __init__(self, core: Core, owner: OwnerDesk) -> None:
        self._core = core
        self._owner = owner
        # The skill service itself: `augure skills` shows, pauses, resumes and deletes.
        self.skills: SkillService = core.skills
        self.tools = core.registry.list
        # The tool's description as the model reads it (a missing setting says so).
        self.describe = core.registry.description

    async def status(self) -> StatusReport:
        core = self._core
        jobs = await self._owner.jobs()
        mcp = core.mcp.status_line()
        return StatusReport(
            version=__version__,
            model=core.llm.model,
            uptime_seconds=int(time.time() - core.started_at),
            tools=[tool.name for tool in core.registry.list()],
            pending_approvals=len(await core.audit.listing(approval_status="pending")),
            paused=jobs.paused,
            jobs=jobs.jobs,
            zone=jobs.zone,
            limits=await core.executor.limits.usage(),
            mcp=core.redact(mcp) if mcp else None,  # a server's error may quote a secret
            fallback=core.models.last_fallback,
        )

    async def servers_started(self) -> list[str]:
        """Once every MCP server has started or failed to: a masked line for each that is
        not ready (its tools are missing from `tools`)."""
        core = self._core
        await core.mcp.started()
        down = [s for s in core.mcp.servers.values() if s.state != "ready"]
        return [core.redact(server.down_text()) for server in down]

    def knows(self, name: str) -> bool:
        """A tool `run_tool` can be asked for: registered, or an MCP server's still absent
        one (the run then says why it is missing)."""
        absent = self._core.executor.absent
        return self._core.registry.get(name) is not None or (
            absent is not None and absent(name) is not None
        )

    async def run_tool(self, name: str, arguments: dict[str, Any] | str) -> ToolResult:
        """A call typed at the shell: every step of the executor, for the `cli` caller (at a
        terminal the owner answers y/N; from a script a call that asks is rejected)."""
        ctx = self._core.context.for_caller(Caller.of("cli"))
        return await self._core.executor.run(name, arguments, ctx)
