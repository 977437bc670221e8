"""Overview: the assistant's state, what waits for a decision, and today's usage."""

from __future__ import annotations

import time
from zoneinfo import ZoneInfo

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure import __version__
from augure.dashboard import queries
from augure.dashboard.auth import Session
from augure.dashboard.pages.usage import PRICES_UNSET, cost, priced
from augure.dashboard.web import Dash, Page


def routes(dash: Dash) -> list[Route]:
    async def overview(request: Request, session: Session) -> Response:
        core = dash.core
        zone = ZoneInfo(core.config.zone)
        (today,) = await queries.usage_per_day(core.store, zone, 1)
        uptime = int(time.time() - core.started_at)
        pending = await core.audit.listing(approval_status="pending", limit=100)
        return dash.render(
            request,
            "overview.html",
            session,
            version=__version__,
            model=core.llm.model,
            uptime=f"{uptime // 3600}h {uptime % 3600 // 60}m",
            paused=await core.scheduler.paused(),
            jobs=len(await core.scheduler.jobs()),
            pending=pending,
            today=today,
            cost=cost(core.config.llm, today.prompt_tokens, today.completion_tokens),
            prices_unset=None if priced(core.config.llm) else PRICES_UNSET,
            calls_today=await queries.count_since(core.store, queries.midnight(zone).timestamp()),
        )

    return [dash.page("/", overview)]


PAGE = Page("Overview", "/", routes)
