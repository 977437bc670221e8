"""The one way the scheduler, skills, background work and the heartbeat run a turn on the
agent (docs/architecture.md, "The composition root and the lifespan")."""

from __future__ import annotations

from collections.abc import Collection

from augure.agent.loop import Agent
from augure.agent.turn import Carried, Reply
from augure.background.manager import Report
from augure.common.caller import Caller
from augure.common.ports import Notifier
from augure.config.settings import Config
from augure.core.spend import SpendCaps
from augure.llm.spend import HEARTBEAT, JOB, SKILL, working_as
from augure.skills.service import SkillService
from augure.tools.base import RunContext

HEARTBEAT_CHAT = "heartbeat"


class TurnRunner:
    """The one way the scheduler, skills, background work and the heartbeat run a turn.

    It names a construction cycle: the agent's tools need the scheduler and the skills, and
    those run their turns on the agent. The runner is built first and handed to them; `bind`
    gives it the agent and the skills once they exist, before anything has started."""

    def __init__(
        self, *, config: Config, notifier: Notifier | None, budget: SpendCaps | None = None
    ) -> None:
        self.config = config
        self.notifier = notifier
        self.budget = budget
        self._agent: Agent | None = None
        self._skills: SkillService | None = None
        self._context: RunContext | None = None

    def bind(self, *, agent: Agent, skills: SkillService, context: RunContext) -> None:
        """`context`: what every tool may use, for the skills a schedule runs."""
        self._agent, self._skills, self._context = agent, skills, context

    @property
    def agent(self) -> Agent:
        if self._agent is None:
            raise RuntimeError("a turn was asked for before the core was built")
        return self._agent

    async def _affordable(self, kind: str) -> None:
        """Work no one waits for is skipped, not begun, once a `[budget]` cap is reached: the
        BudgetReached raised here is recorded as a skip by whoever runs it. So is a cap set
        while the model this work asks first has no price."""
        if self.budget is not None:
            await self.budget.before_work(kind, self.agent.llm)

    async def job(self, key: str, text: str, chain: tuple[str, ...], read: tuple[str, ...]) -> str:
        await self._affordable(JOB)
        # Each run starts a fresh conversation: a job's output is delivered to the owner,
        # never fed back as user input, and never piles up across runs.
        await self.agent.new_conversation(key)
        with working_as(JOB):  # from what the turn that made the job had `read`
            reply = await self.agent.handle(key, text, origin=chain, carried=Carried(read))
        return self._with_sources(reply)

    async def skill(self, skill_id: str, chain: tuple[str, ...]) -> str:
        if self._skills is None or self._context is None:
            raise RuntimeError("a skill was asked for before the core was built")
        await self._affordable(SKILL)
        with working_as(SKILL):
            ctx = self._context.for_caller(Caller.of(chain))
            return await self._skills.run_scheduled(skill_id, ctx)

    async def skill_turn(
        self, conversation: str, prompt: str, tools: Collection[str], chain: tuple[str, ...]
    ) -> str:
        # A fresh conversation each run, limited to the skill's declared tools.
        await self.agent.new_conversation(conversation)
        with working_as(SKILL):
            return (await self.agent.handle(conversation, prompt, origin=chain, tools=tools)).text

    async def heartbeat(self, prompt: str) -> str:
        owner = self.config.owner_chat
        assert owner is not None
        await self._affordable(HEARTBEAT)
        # Under the owner chat's lock, so it never overlaps a turn there; in a fresh
        # conversation of its own, so its checks do not pile up in the owner's history.
        async with self.agent.lock(owner):
            await self.agent.new_conversation(HEARTBEAT_CHAT)
            with working_as(HEARTBEAT):
                reply = await self.agent.handle(HEARTBEAT_CHAT, prompt, origin="heartbeat")
        return self._with_sources(reply)

    def _with_sources(self, reply: Reply) -> str:
        """A job's or the heartbeat's answer is kept as text and delivered later (again after
        a restart), so the line naming what it drew on goes into the text itself."""
        line = reply.sources.line if self.config.telegram.show_sources else ""
        return f"{reply.text}\n\n{line}" if line else reply.text

    async def announce(self, report: Report) -> None:
        """A background task's result comes back as a turn of its own in its chat, for the
        caller that released it, whole (its chain, tools and grants), delivered like a chat
        turn: its text, then the task's files and the turn's own (docs/background.md)."""
        chat_id, caller = report.chat_id, report.caller
        fetches = caller.reading.fetches if caller.reading is not None else 0
        reply = await self.agent.handle(
            chat_id,
            report.content,
            origin=caller,
            asked_from=report.source,
            carried=Carried(fetches=fetches),
        )
        if self.notifier is not None:
            await self.notifier.send(chat_id, reply.text, reply.sources)
            for artifact in [*report.files, *reply.artifacts]:
                await self.notifier.deliver(chat_id, artifact)
