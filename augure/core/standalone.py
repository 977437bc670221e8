"""The home's state with nothing that runs: what `Augure.reading` opens for `augure dashboard`
and the CLI's commands (docs/architecture.md, "The door")."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from augure.approval.gate import ApprovalGate
from augure.background import TaskManager
from augure.background.manager import Report
from augure.common.logins import LoginTokens
from augure.config.settings import Config
from augure.core.spend import SpendCaps
from augure.host.secrets import Redactor
from augure.llm.client import LLM
from augure.memory.store import MemoryStore
from augure.scheduler.runner import Scheduler
from augure.skills.store import SkillStore
from augure.store.audit import Audit
from augure.store.spend import Ledger
from augure.store.state import Store
from augure.store.tasks import Tasks


@dataclass(kw_only=True)
class Standalone:
    """What `augure dashboard` and the CLI's commands read and write: the home's state, and
    nothing that runs (`Augure.reading`).

    The command may run beside a bot (`augure run`) on the same home, so it builds no agent,
    no tools, no MCP servers and no skill watcher, and never starts the scheduler or the
    heartbeat: the bot does all of that. Every action reaches the bot through state.db, the
    way the CLI's do: a decision is a conditional UPDATE the bot's gate polls for (`augure
    approve`), "Run now" and the pauses are rows its scheduler reads at each tick (`augure
    jobs`). A background task can be stopped only by the process running it, so the tasks
    page refuses it here. See docs/reference/dashboard.md."""

    config: Config
    store: Store
    memory: MemoryStore
    audit: Audit
    gate: ApprovalGate
    scheduler: Scheduler
    skill_files: SkillStore
    tasks: TaskManager
    # Read for its model's name, and for `augure recall`'s query embedding only.
    llm: LLM
    budget: SpendCaps  # the `[budget]` caps over the ledger: the spend report, recall's query
    redact: Redactor
    started_at: float = field(default_factory=time.time)
    logins: LoginTokens = field(default_factory=LoginTokens)

    @classmethod
    def on(cls, config: Config, store: Store, started_at: float | None = None) -> Standalone:
        """On a store the lifespan opened; `started_at`: when the bot beside it started (its
        uptime is the one shown)."""
        memory = MemoryStore(config.memory_dir)
        memory.ensure()
        audit = Audit(store)

        async def runs_in_the_bot(*_: object) -> str:
            raise RuntimeError("jobs and tasks run in `augure run`, not in `augure dashboard`")

        async def nothing_to_announce(report: Report) -> None:
            raise RuntimeError("no background task runs in `augure dashboard`")

        return cls(
            config=config,
            store=store,
            memory=memory,
            audit=audit,
            # No approver: this process makes no call that waits for a decision, it only
            # writes decisions, which the bot's gate picks up from state.db.
            gate=ApprovalGate(audit, config.approval.timeout_seconds),
            scheduler=Scheduler(
                store=store,
                run_turn=runs_in_the_bot,
                default_zone=config.zone,
                misfire_grace_seconds=config.scheduler.misfire_grace_seconds,
                owner_chat=config.owner_chat,
            ),
            skill_files=SkillStore(config.skills.path or config.home / "skills", store),
            tasks=TaskManager(Tasks(store.db), nothing_to_announce),
            llm=LLM(config.llm),
            budget=SpendCaps(config, Ledger(store.db)),
            redact=Redactor.from_config(config),
            started_at=time.time() if started_at is None else started_at,
        )

    async def close(self) -> None:
        """The model client; the store is the lifespan's to close."""
        await self.llm.close()
