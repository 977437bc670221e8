"""`[dashboard]`: the local web dashboard (docs/reference/dashboard.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class DashboardConfig(BaseModel):
    """docs/reference/dashboard.md: the local web dashboard (augure/dashboard)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)  # 0: any free port (the URL says which)
    # Off: only a loopback host is accepted, so the page that can approve tool calls is
    # reachable from this machine only.
    allow_remote: bool = False
