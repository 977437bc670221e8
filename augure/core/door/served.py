"""What the owner's desk and the reports read: the bot's own core, or the state of a process
that runs nothing (`augure dashboard` beside a bot, a CLI command), which reaches a running bot
through state.db only."""

from __future__ import annotations

from typing import Protocol

from augure.approval.gate import ApprovalGate
from augure.background import TaskManager
from augure.common.logins import LoginTokens
from augure.config.settings import Config
from augure.core.spend import SpendCaps
from augure.host.secrets import Redactor
from augure.llm.client import LLM
from augure.memory.store import MemoryStore
from augure.scheduler.runner import Scheduler
from augure.skills.store import SkillStore
from augure.store.audit import Audit
from augure.store.state import Store


class Served(Protocol):
    @property
    def config(self) -> Config: ...
    @property
    def store(self) -> Store: ...
    @property
    def memory(self) -> MemoryStore: ...
    @property
    def audit(self) -> Audit: ...
    @property
    def gate(self) -> ApprovalGate: ...
    @property
    def scheduler(self) -> Scheduler: ...
    @property
    def skill_files(self) -> SkillStore: ...
    @property
    def tasks(self) -> TaskManager: ...
    @property
    def llm(self) -> LLM: ...
    @property
    def budget(self) -> SpendCaps: ...
    @property
    def redact(self) -> Redactor: ...
    @property
    def started_at(self) -> float: ...
    @property
    def logins(self) -> LoginTokens: ...
