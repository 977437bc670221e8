"""Personas (docs/reference/personas.md#personas): `$AUGURE_HOME/personas/<name>.md`, one chosen per
chat.

The choice is stored per chat in state.db, so it survives restarts; the chosen text goes
into the stable part of that chat's system prompt only, leaving other chats' prompts (and
their providers' prompt caches) untouched.
"""

from __future__ import annotations

import re
from pathlib import Path

from augure.store.state import Store

SETTING = "persona"
# A file name only: no separators, so a name can never reach outside the folder.
NAME = re.compile(r"^[\w-]{1,64}$")


class Personas:
    def __init__(self, home: Path, store: Store) -> None:
        self.folder = home / "personas"
        self.store = store
        # Each chat's choice, read from state.db once: the prompt is built on every turn, and
        # only `choose` (this process) changes it.
        self._chosen: dict[str, str] = {}

    def names(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(
            path.stem
            for path in self.folder.glob("*.md")
            if path.is_file() and NAME.match(path.stem)
        )

    def text(self, name: str) -> str | None:
        if not NAME.match(name):
            return None
        path = self.folder / f"{name}.md"
        try:
            return path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None

    async def active(self, chat_id: str) -> str | None:
        """The chat's persona, if it was chosen and its file still exists."""
        name = await self._choice(chat_id)
        return name if name and name in self.names() else None

    async def _choice(self, chat_id: str) -> str:
        if chat_id not in self._chosen:
            self._chosen[chat_id] = await self.store.chat_setting(chat_id, SETTING) or ""
        return self._chosen[chat_id]

    async def choose(self, chat_id: str, name: str | None) -> None:
        """Switch this chat to `name` (one of `names()`), or back to none."""
        if name is not None and name not in self.names():
            raise KeyError(name)
        await self.store.set_chat_setting(chat_id, SETTING, name or "")
        self._chosen[chat_id] = name or ""

    async def prompt_for(self, chat_id: str) -> str:
        """The chosen persona's text; a chat without one costs no file-system access."""
        name = await self._choice(chat_id)
        return (self.text(name) or "") if name else ""
