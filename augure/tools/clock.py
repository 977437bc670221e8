"""The `datetime` tool: the current date and time in any IANA zone."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field

from augure.tools.base import RunContext, ToolResult, tool


@tool("datetime", deferred=True)  # the system prompt ends with the time already
async def datetime_tool(
    ctx: RunContext,
    timezone: Annotated[str | None, Field(description="IANA zone, e.g. Europe/Paris")] = None,
) -> ToolResult:
    """The exact time, here or in another zone."""
    name = timezone or ctx.config.zone
    try:
        zone = ZoneInfo(name) if name else None
    except (ZoneInfoNotFoundError, ValueError):
        return ToolResult.error(f"unknown time zone {timezone!r}; use an IANA name")
    now = datetime.now(zone).astimezone(zone)
    label = name or now.tzname() or "local"
    return ToolResult.ok(f"{now.strftime('%A %Y-%m-%d %H:%M:%S %z')} ({label})")
