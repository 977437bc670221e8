"""Overview: the assistant's state, what waits for a decision, and today's usage."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure import __version__
from augure.dashboard.auth import Session
from augure.dashboard.pages.usage import PRICES_UNSET, cost, priced
from augure.dashboard.web import Dash, Page


def routes(dash: Dash) -> list[Route]:
    async def overview(request: Request, session: Session) -> Response:
        door = dash.door
        (today,) = await door.reports.usage_per_day(1)
        uptime = door.reports.uptime_seconds()
        pending = await door.reports.pending_approvals(limit=100)
        jobs = await door.owner.jobs()
        llm = door.config.llm
        return dash.render(
            request,
            "overview.html",
            session,
            version=__version__,
            model=door.reports.model(),
            uptime=f"{uptime // 3600}h {uptime % 3600 // 60}m",
            paused=jobs.paused,
            bot_running=jobs.bot_running,
            jobs=len(jobs.jobs),
            pending=pending,
            today=today,
            cost=cost(llm, today.prompt_tokens, today.completion_tokens),
            prices_unset=None if priced(llm) else PRICES_UNSET,
            calls_today=await door.reports.calls_today(),
        )

    return [dash.page("/", overview)]


PAGE = Page("Overview", "/", routes)
