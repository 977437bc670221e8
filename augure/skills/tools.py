"""The skill tools (docs/reference/tools.md#skill-tools): create_skill, list_skills, run_skill,
manage_skill, install_skill.

They are built around one SkillService (`skill_tools(service)`), so they share its store and
its cache of what an install approval showed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from augure.skills.generate import Request
from augure.skills.model import SkillError, check_id
from augure.tools.base import Egress, RunContext, Tool, ToolResult, tool

if TYPE_CHECKING:
    from augure.skills.service import SkillService

SkillId = Annotated[str, Field(description="skill id")]


def skill_tools(service: SkillService) -> list[Tool]:
    return [
        build(service)
        for build in (_create_skill, _list_skills, _run_skill, _manage_skill, _install_skill)
    ]


def _create_skill(service: SkillService) -> Tool:
    @tool(
        "create_skill",
        deferred=True,  # skill management is occasional: loaded on demand
        # Its description goes into every later prompt's catalog and its code runs alone:
        # after outside content, making one asks (docs/security.md, "No deferred leak").
        stays=lambda p, ctx: [p.description],
        safe=False,
        # The coding model writes, the test runs, repairs follow: minutes, not seconds.
        timeout=900.0,
    )
    async def create_skill(
        ctx: RunContext,
        description: Annotated[str, Field(description="what the skill should do, in detail")],
        trigger_type: Literal["cron", "manual"],
        schedule: Annotated[
            str | None, Field(description="5-field cron, required for trigger_type cron")
        ] = None,
        tags: list[str] | None = None,
    ) -> ToolResult:
        """Turn a repeatable task the owner describes into a tested skill. It is written
        (code or instructions), tested, and activated if the test passes; active skills run
        with run_skill."""
        if trigger_type == "cron" and not schedule:
            return ToolResult.error("a cron skill needs schedule (5 fields, e.g. 0 8 * * *)")
        request = Request(description, trigger_type, schedule, tuple(tags or ()))
        try:
            return ToolResult.ok(await service.create(request))
        except SkillError as exc:
            return ToolResult.error(str(exc))

    return create_skill


def _list_skills(service: SkillService) -> Tool:
    @tool("list_skills", deferred=True)  # the active ones are in the prompt already
    async def list_skills(ctx: RunContext) -> ToolResult:
        """List all skills: state, trigger, last run."""
        lines = [
            f"{record.id} {record.version} [{record.state}] "
            f"{'cron ' + meta.schedule if meta and meta.schedule else 'manual'}; last run: {last}"
            f" — {meta.description if meta else '(SKILL.md unreadable)'}"
            for record, meta, last in await service.files.listing()
        ]
        return ToolResult.ok("\n".join(lines) or "No skills yet.")

    return list_skills


def _run_skill(service: SkillService) -> Tool:
    @tool(
        "run_skill",
        relays=True,
        # The calls inside take the executor's write lock one by one; holding it for the
        # whole run would deadlock the first write, as for execute_code.
        safe=True,
        timeout=3600.0,
    )
    async def run_skill(ctx: RunContext, id: SkillId) -> ToolResult:
        """Run an active skill now."""
        try:
            result = await service.run(id, ctx)
        except SkillError as exc:
            return ToolResult.error(str(exc))
        return result.result

    return run_skill


def _manage_skill(service: SkillService) -> Tool:
    async def manage_preview(arguments: Any, ctx: RunContext) -> dict[str, Any] | str:
        # An id that names no skill is refused before the owner is bothered with it.
        try:
            return await service.summary(arguments.id)
        except SkillError as exc:
            return str(exc)

    @tool(
        "manage_skill",
        risk="high",
        deferred=True,
        target=lambda p: f"manage_skill:{p.action}:{p.id}",
        preview=manage_preview,
    )
    async def manage_skill(
        ctx: RunContext, id: SkillId, action: Literal["pause", "resume", "delete"]
    ) -> ToolResult:
        """Pause, resume or delete a skill."""
        try:
            check_id(id)
            if action == "pause":
                return ToolResult.ok(await service.pause(id))
            if action == "resume":
                return ToolResult.ok(await service.resume(id))
            return ToolResult.ok(await service.delete(id))
        except SkillError as exc:
            return ToolResult.error(str(exc))

    return manage_skill


def _install_skill(service: SkillService) -> Tool:
    async def install_preview(arguments: Any, ctx: RunContext) -> dict[str, Any] | str:
        prepared = await service.hubs.prepare(arguments.skill_id, arguments.hub)
        return prepared if isinstance(prepared, str) else prepared.summary()

    @tool(
        "install_skill",
        egress=Egress.WRITE,
        deferred=True,
        target=lambda p: f"install_skill:{p.skill_id}",
        # Rules name the version, or a GitHub skill's commit (its version may never change):
        # "Always allow" covers this id at exactly what was shown.
        refine=lambda p, shown: (
            f"install_skill:{p.skill_id}@{shown.get('commit') or shown.get('version', '?')}"
        ),
        preview=install_preview,
        timeout=300.0,
    )
    async def install_skill(
        ctx: RunContext,
        skill_id: Annotated[str, Field(description="the id of a skill on a skill hub")],
        hub: Annotated[
            str | None, Field(description="which configured hub (default: the first with it)")
        ] = None,
    ) -> ToolResult:
        """Install or update a skill from the skill hubs. A hash check and a static scan come
        first; it is tested before it becomes active."""
        try:
            return ToolResult.ok(await service.hubs.install(skill_id, ctx.approved, hub))
        except SkillError as exc:
            return ToolResult.error(str(exc))

    return install_skill
