"""How much of an MCP server's output the bot takes (docs/reference/mcp.md, "Limits"): every message
is bounded while it arrives, and what the listing puts before the model on every request is
bounded once listed."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from augure.common.errors import NotDone

if TYPE_CHECKING:
    from mcp_types import Tool as ListedTool

log = logging.getLogger(__name__)

# One JSON-RPC message (a result, a page of tools): above it, dropped as it arrives.
MESSAGE_LIMIT = 2 * 1024 * 1024
# Characters of a tool's description (and title) the model is shown.
DESCRIPTION_LIMIT = 2000
# Bytes of one tool's input schema as JSON; a tool with a larger one is left out.
SCHEMA_LIMIT = 16 * 1024
# Bytes of all of a server's descriptions and schemas; the tools past it are left out.
LISTING_LIMIT = 512 * 1024
# Pages of `tools/list` followed; a server handing out cursors forever stops here.
PAGE_LIMIT = 100
# Words every refusal of a too-large message carries, the SDK's own SSE one included
# ("Server-sent event exceeded the N byte limit"): how the call tells it from a failure.
OVER_LIMIT = "byte limit"


class OversizedAnswer(NotDone):
    """The server's answer was over `MESSAGE_LIMIT` and was dropped while it arrived."""


def too_large() -> str:
    return f"the message exceeded the {MESSAGE_LIMIT} {OVER_LIMIT}"


def megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"


def bounded(server: str, listed: list[ListedTool]) -> tuple[list[ListedTool], bool]:
    """The tools with descriptions cut to `DESCRIPTION_LIMIT`, without those whose schema is
    over `SCHEMA_LIMIT` or which come after `LISTING_LIMIT` is spent; and whether it is."""
    kept: list[ListedTool] = []
    spent = 0
    for tool in listed:
        schema = len(json.dumps(tool.input_schema))
        if schema > SCHEMA_LIMIT:
            log.warning(
                "MCP server %s: tool %r left out (input schema of %d bytes, over %d)",
                *(server, tool.name[:80], schema, SCHEMA_LIMIT),
            )
            continue
        tool = tool.model_copy(
            update={"description": _cut(tool.description), "title": _cut(tool.title)}
        )
        spent += schema + len(tool.description or "") + len(tool.title or "")
        if spent > LISTING_LIMIT:
            log.warning(
                "MCP server %s: %d tool(s) left out (descriptions and schemas over %d bytes)",
                *(server, len(listed) - len(kept), LISTING_LIMIT),
            )
            return kept, True
        kept.append(tool)
    return kept, False


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= DESCRIPTION_LIMIT:
        return text
    return text[: DESCRIPTION_LIMIT - 1] + "…"
