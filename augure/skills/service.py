"""The skills service: create, test, run, repair, pause, install. One per Core.

States (docs/reference/skills.md#states, issue): `draft` (written, its test never passed),
`testing`, `active`, `paused` (by the owner, or after `skills.max_failures` failed runs), `broken`
(installed but
its test failed). Only `active` skills run, and only they are in the prompt's catalog.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any

from augure.codemode import stubs
from augure.codemode.tool import api_tools
from augure.common.caller import Reading
from augure.config.settings import Config
from augure.llm.models import Models
from augure.scheduler.jobs import JobError
from augure.scheduler.runner import Scheduler
from augure.skills import generate
from augure.skills.model import (
    FILES,
    SKILL_MD,
    Catalog,
    SkillError,
    SkillMeta,
    bump,
    check_id,
    companions_text,
    parse_skill_md,
    render_skill_md,
)
from augure.skills.store import SkillRecord, SkillStore, bundled_dir
from augure.store.state import Store
from augure.tools.base import RunContext, ToolResult
from augure.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from augure.codemode import runtime
    from augure.skills.install import Installer
    from augure.skills.runner import CheckResult, RunResult

log = logging.getLogger(__name__)

# Not callable from a skill: one that creates, runs or installs skills makes failures recursive.
SKILL_TOOLS = frozenset(
    {"create_skill", "list_skills", "run_skill", "manage_skill", "install_skill"}
)
WATCH_SECONDS = 2.0  # how soon changes made by another process (the CLI) reach the prompt
BUNDLED_KEY = "skills.bundled."  # + id: installed once; a skill the owner deleted stays gone


# Runs an instruction skill's turn: (conversation, prompt, declared tools) → the answer. The
# agent is a layer above the skills: it is handed in, never imported.
# (conversation, prompt, declared tools, origin chain) → the answer.
SkillTurn = Callable[[str, str, Collection[str], tuple[str, ...]], Awaitable[str]]


class SkillService:
    def __init__(
        self,
        config: Config,
        store: Store,
        registry: ToolRegistry,
        run_turn: SkillTurn,
        catalog: Catalog,
        scheduler: Scheduler,
        llm: Models,
    ) -> None:
        self.config = config
        self.files = SkillStore(config.skills.path or config.home / "skills", store)
        self.registry = registry
        self.run_turn = run_turn
        self.catalog = catalog
        self.scheduler = scheduler
        self.llm = llm
        self._coding = generate.coding_llm(config, llm.gate)
        self._watcher: asyncio.Task[None] | None = None

    @functools.cached_property
    def hubs(self) -> Installer:
        """Installs and updates from hubs; loaded when a skill is first installed or updated,
        not at the bot's start (docs/performance.md)."""
        from augure.skills.install import Installer

        return Installer(self)

    @property
    def max_failures(self) -> int:
        return self.config.skills.max_failures

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        if self._coding is not None:
            await self._coding.close()

    def watch(self) -> None:
        """Keep the catalog current when another process (`augure skills ...`) changes skills."""
        if self._watcher is None:
            watching = self.files.watch(self.refresh_catalog, WATCH_SECONDS)
            self._watcher = asyncio.create_task(watching)

    # -- what the model may call -------------------------------------------------------

    def known_tools(self) -> set[str]:
        """Tools a skill's code may declare: those code mode offers, minus SKILL_TOOLS."""
        return {t.name for t in api_tools(self.registry)} - SKILL_TOOLS

    def _stubs(self) -> list[str]:
        tools = [self.registry.get(n) for n in sorted(self.known_tools())]
        return [stubs.stub(t, brief=True) for t in tools if t is not None]

    def _limits(self) -> runtime.RunLimits:
        # The runtime loads with the first snippet, not at the bot's start (docs/performance.md).
        from augure.codemode import runtime

        code_mode = self.config.code_mode
        return runtime.RunLimits(code_mode.timeout_seconds, code_mode.max_tool_calls)

    # -- first run, catalog ------------------------------------------------------------

    async def install_bundled(self) -> list[str]:
        """Copy the bundled skills a home has never had; record them active."""
        source = bundled_dir()
        installed: list[str] = []
        if source is None:
            return installed
        for folder in sorted(p for p in source.iterdir() if (p / SKILL_MD).is_file()):
            try:
                skill_id = check_id(folder.name)
                if await self.files.setting(BUNDLED_KEY + skill_id) is not None:
                    continue
                files = {n: (folder / n).read_bytes() for n in FILES if (folder / n).is_file()}
                meta = parse_skill_md(files[SKILL_MD].decode(), skill_id)
                if not self.files.exists(skill_id) and await self.files.record(skill_id) is None:
                    self.files.write(skill_id, files)
                    await self.files.put(
                        skill_id, state="active", version=meta.version, source="bundled"
                    )
                    await self._schedule(meta)
                    installed.append(skill_id)
                await self.files.set_setting(BUNDLED_KEY + skill_id, meta.version)
            except (SkillError, JobError, OSError) as exc:
                log.warning("bundled skill %s not installed: %s", folder.name, exc)
        await self.refresh_catalog()
        return installed

    async def refresh_catalog(self) -> None:
        self.catalog.text = await self.files.catalog()

    async def summary(self, skill_id: str) -> dict[str, Any]:
        record = await self._record(check_id(skill_id))
        meta = self.files.meta(skill_id)
        return {"skill": skill_id, "state": record.state, "summary": meta.description}

    async def _record(self, skill_id: str) -> SkillRecord:
        return await self.files.existing(skill_id)

    # -- testing -----------------------------------------------------------------------

    async def check(self, meta: SkillMeta, files: dict[str, bytes]) -> CheckResult:
        # A skill's runner loads with its first run or test, not at the bot's start
        # (docs/performance.md).
        from augure.skills.runner import check_files

        return await check_files(meta, files, self.registry, self._limits())

    async def activate(self, meta: SkillMeta) -> None:
        await self.files.set_state(meta.name, "active")
        await self._schedule(meta)
        await self.refresh_catalog()

    async def _schedule(self, meta: SkillMeta) -> None:
        if meta.trigger == "cron" and meta.schedule:
            await self.scheduler.schedule_skill(meta.name, meta.schedule, meta.timezone)
        else:
            await self.scheduler.unschedule_skill(meta.name)

    # -- create ------------------------------------------------------------------------

    async def create(self, request: generate.Request) -> str:
        """Generate, test and (if the test passes) activate. The text is for the owner."""
        llm = self._coding or self.llm
        messages = generate.first_messages(request, self._stubs())
        skill_id: str | None = None
        problem = ""
        for attempt in range(1 + self.max_failures):
            if attempt:
                messages.append(generate.retry_message(problem))
            answer = await generate.ask(llm, messages)
            try:
                draft = generate.parse_answer(answer, request, self.known_tools(), skill_id)
            except SkillError as exc:
                problem = str(exc)
                continue
            if skill_id is None:
                if await self.files.record(draft.meta.name) or self.files.exists(draft.meta.name):
                    problem = f"a skill named {draft.meta.name!r} exists; choose another name"
                    continue
                skill_id = draft.meta.name
            self.files.write(skill_id, draft.files)
            await self.files.put(
                skill_id, state="testing", version=draft.meta.version, source="generated"
            )
            result = await self.check(draft.meta, draft.files)
            if result.passed:
                await self.activate(draft.meta)
                when = (
                    f"scheduled `{draft.meta.schedule}`"
                    if draft.meta.trigger == "cron"
                    else "run it with run_skill"
                )
                repairs = f" after {attempt} repair round(s)" if attempt else ""
                return (
                    f"Skill {skill_id} {draft.meta.version} is active{repairs} ({when}): "
                    f"{draft.meta.description}\nTest output:\n{result.detail}"
                )
            problem = f"the test failed: {result.detail}"
            await self.files.set_state(skill_id, "draft", problem)
        if skill_id is None:
            raise SkillError(f"the coding model gave no usable skill: {problem}")
        await self.files.set_state(skill_id, "draft", problem)
        raise SkillError(
            f"skill {skill_id} stays a draft: {problem} (after {self.max_failures} repair "
            "rounds, skills.max_failures)"
        )

    # -- run ---------------------------------------------------------------------------

    async def run(self, skill_id: str, ctx: RunContext) -> RunResult:
        """Run an active skill once, recorded; a failure counts towards the limit."""
        # A skill's runner loads with its first run or test, not at the bot's start
        # (docs/performance.md).
        from augure.skills.runner import RunResult, run_skill_code

        record = await self._record(check_id(skill_id))
        if record.state != "active":
            why = f" ({record.reason})" if record.reason else ""
            raise SkillError(f"skill {skill_id} is {record.state}{why}; only active skills run")
        meta = self.files.meta(skill_id)
        # Whoever runs it (the chat, a job, the CLI), the skill is one more link, and it may
        # use only the tools it declares, within what its caller may use.
        allowed = set(meta.declared(self.known_tools()))
        run_id = await self.files.run_started(skill_id, ctx.origin)  # who ran it
        ctx = ctx.via(f"skill:{skill_id}", tools=allowed)
        if ctx.caller.reading is None:  # a schedule's or the CLI's run: its code, not the owner's
            ctx = ctx.for_caller(dataclasses.replace(ctx.caller, reading=Reading()))
        code = self.files.code(skill_id)
        try:
            if code is not None:
                result = await run_skill_code(code, ctx)
            else:
                result = await self._instructions(meta, ctx)
        except Exception as exc:  # a run that crashed is a failed run, recorded
            log.exception("skill %s failed", skill_id)
            result = RunResult(ToolResult.error(f"{type(exc).__name__}: {exc}"), [])
        rejected = not result.ok and result.rejected
        outcome = "ok" if result.ok else "rejected" if rejected else "failed"
        await self.files.run_finished(run_id, outcome, result.output, result.calls)
        if result.ok:
            if record.failures:
                await self.files.set_failures(skill_id, 0)
            return result
        if rejected:  # the owner said no: not a fault of the skill
            return result
        reading = ctx.caller.reading
        outside = sorted(reading.sources) if reading is not None and reading.tainted else []
        note = await self._failed(record, meta, result.output, outside)
        noted = result.result.with_content(f"{result.result.content}\n\n{note}")
        return dataclasses.replace(result, result=noted)

    async def run_scheduled(self, skill_id: str, ctx: RunContext) -> str:
        """For the scheduler: the output delivered to the owner, errors included."""
        try:
            return (await self.run(skill_id, ctx)).output
        except SkillError as exc:
            return f"Skill {skill_id} did not run: {exc}"

    async def _instructions(self, meta: SkillMeta, ctx: RunContext) -> RunResult:
        from augure.skills.runner import RunResult  # loaded with the first run (see `run`)

        conversation = f"skill:{meta.name}"
        prompt = (
            f"Run the skill {meta.name} now ({meta.description}). Follow its instructions and "
            f"answer with the result for the owner.\n\n{meta.body}"
            + companions_text(self.files.companions(meta.name))
        )
        started = time.time()
        tools = ctx.allowed_tools if ctx.allowed_tools is not None else meta.tools
        answer = await self.run_turn(conversation, prompt, tools, ctx.caller.chain)
        calls = await self.files.calls_since(conversation, started)
        return RunResult(ToolResult.ok(answer), calls)

    async def _failed(
        self, record: SkillRecord, meta: SkillMeta, failure: str, outside: list[str]
    ) -> str:
        failures = record.failures + 1
        await self.files.set_failures(record.id, failures)
        if failures >= self.max_failures:
            await self.pause(record.id, f"{failures} failed runs (skills.max_failures)")
            return (
                f"Skill {record.id} is now paused after {failures} failed runs "
                f"(skills.max_failures = {self.max_failures}); fix it, then resume it."
            )
        if record.source != "generated":
            return f"Skill {record.id} failed ({failures}/{self.max_failures})."
        if outside:  # a repair written from what a page said would run unattended later
            return (
                f"Skill {record.id} failed ({failures}/{self.max_failures}); not repaired "
                f"automatically: the run read outside content ({', '.join(outside)})."
            )
        return await self._repair(record, meta, failure, failures)

    async def _repair(
        self, record: SkillRecord, meta: SkillMeta, failure: str, failures: int
    ) -> str:
        files = self.files.files(record.id)
        messages = generate.repair_messages(files, failure, self._stubs())
        request = generate.Request(meta.description, meta.trigger, meta.schedule, meta.tags)
        try:
            answer = await generate.ask(self._coding or self.llm, messages)
            draft = generate.parse_answer(answer, request, self.known_tools(), record.id)
        except SkillError as exc:
            return f"Skill {record.id} failed ({failures}/{self.max_failures}); repair: {exc}"
        repaired = dataclasses.replace(draft.meta, version=bump(record.version))
        new_files = {**draft.files, SKILL_MD: render_skill_md(repaired).encode()}
        result = await self.check(repaired, new_files)
        if not result.passed:
            return (
                f"Skill {record.id} failed ({failures}/{self.max_failures}); the repair did not "
                f"pass its test, so the old version stays: {result.detail}"
            )
        self.files.write(record.id, new_files, staging=True)
        self.files.promote(record.id)
        await self.files.put(
            record.id, state="active", version=repaired.version, source=record.source
        )
        await self.files.set_failures(record.id, failures)
        await self.activate(repaired)
        return (
            f"Skill {record.id} failed ({failures}/{self.max_failures}); it was repaired "
            f"and tested: now version {repaired.version}."
        )

    # -- manage ------------------------------------------------------------------------

    async def pause(self, skill_id: str, reason: str = "paused by the owner") -> str:
        record = await self._record(skill_id)
        await self.files.set_state(record.id, "paused", reason)
        await self.scheduler.unschedule_skill(record.id)
        await self.refresh_catalog()
        return f"Skill {skill_id} is paused."

    async def resume(self, skill_id: str) -> str:
        record = await self._record(skill_id)
        if record.state != "paused":
            raise SkillError(f"skill {skill_id} is {record.state}, not paused")
        await self.files.set_failures(record.id, 0)
        await self.activate(self.files.meta(skill_id))
        return f"Skill {skill_id} is active again."

    async def delete(self, skill_id: str) -> str:
        await self._record(skill_id)
        await self.scheduler.unschedule_skill(skill_id)
        self.files.remove_files(skill_id)
        await self.files.forget(skill_id)
        await self.refresh_catalog()
        return f"Skill {skill_id} is deleted."
