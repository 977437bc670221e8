"""The two doors: `ReadingDoor`, what a process that runs nothing opens (`augure dashboard`
beside a bot, the CLI's listings), and `Door`, what `Augure.running` yields, with the chat
desk and what only a running core answers besides. Reading, not running, is a type: a
`ReadingDoor` has no chat desk to call."""

from __future__ import annotations

from augure.common.logins import LoginTokens
from augure.config.settings import Config
from augure.core.app import Core
from augure.core.door.chat import ChatDesk
from augure.core.door.owner import OwnerDesk
from augure.core.door.reports import Reports
from augure.core.door.running import RunningDesk
from augure.core.door.served import Served


class ReadingDoor:
    def __init__(self, state: Served) -> None:
        self.config: Config = state.config
        self.logins: LoginTokens = state.logins  # the dashboard's one-time login tokens
        self.owner = OwnerDesk(state)
        self.reports = Reports(state)


class Door(ReadingDoor):
    """`steps` is the lifespan's journal: each step as it starts and as it stops."""

    def __init__(self, core: Core, steps: list[str]) -> None:
        super().__init__(core)
        self.chat = ChatDesk(core)
        self.running = RunningDesk(core, self.owner)
        self.steps = steps
