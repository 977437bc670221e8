"""Cores a test opens through the one lifespan (augure.core.lifespan), all closed at its end."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from augure.config.settings import Config
from augure.core.app import Core
from augure.core.lifespan import Augure


class Cores:
    def __init__(self) -> None:
        self.stack = AsyncExitStack()
        self.opened: list[Core] = []

    async def open(self, config: Config, **wiring: Any) -> Core:
        opened = await self.stack.enter_async_context(Augure.opened(config, **wiring))
        self.opened.append(opened.core)
        return opened.core

    async def close(self) -> None:
        await self.stack.aclose()

    def __len__(self) -> int:
        return len(self.opened)
