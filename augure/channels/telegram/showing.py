"""How a message goes out for what its words drew on: the one place that decides.

Telegram's servers fetch a preview of the first link in a message, with no click from anyone:
a link the model wrote after reading a page could carry the owner's data to the page's author
through Telegram itself. So the bot asks for no preview on anything it sends (the bot's
defaults, augure.channels.telegram.application); an answer of work that read no outside
content may have one when `[telegram] link_previews` is on. An answer that drew on outside
content shows each link's address as text, and ends with one line naming its sources
(`[telegram] show_sources`). docs/security.md, "The reply is a way out".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from telegram import LinkPreviewOptions

from augure.channels.telegram.markup import escape_html
from augure.channels.telegram.render import TELEGRAM_LIMIT, Chunk, render_chunks, utf16_len
from augure.common.ports import NOT_KNOWN, Sources
from augure.config.telegram import TelegramConfig

NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
PREVIEW = LinkPreviewOptions(is_disabled=False)


@dataclass(frozen=True)
class Showing:
    link_previews: bool = False
    show_sources: bool = True

    @classmethod
    def of(cls, settings: TelegramConfig) -> Showing:
        return cls(settings.link_previews, settings.show_sources)

    def previews(self, sources: Sources = NOT_KNOWN) -> LinkPreviewOptions:
        return PREVIEW if self.link_previews and not sources.outside else NO_PREVIEW

    def chunks(
        self, markdown: str, sources: Sources = NOT_KNOWN, limit: int = TELEGRAM_LIMIT
    ) -> list[Chunk]:
        """The parts to send: links with their addresses when the words drew on outside
        content, and the sources line at the end of the last part."""
        line = sources.line if self.show_sources else ""
        room = limit - (utf16_len(line) + 2 if line else 0)
        chunks = render_chunks(markdown, room, addresses=sources.outside)
        if not line:
            return chunks
        said = Chunk(html=f"<i>{escape_html(line)}</i>", plain=line)
        if not chunks:
            return [said]
        last = chunks[-1]
        joined = replace(last, html=f"{last.html}\n\n{said.html}", plain=f"{last.plain}\n\n{line}")
        return [*chunks[:-1], joined]
