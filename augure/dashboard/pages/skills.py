"""Skills: each skill with its state, trigger, declared tools and last run."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure.dashboard.auth import Session
from augure.dashboard.web import Dash, Page


def routes(dash: Dash) -> list[Route]:
    async def listing(request: Request, session: Session) -> Response:
        skills = [
            {
                "record": record,
                "trigger": f"cron {meta.schedule}" if meta and meta.schedule else "manual",
                "description": meta.description if meta else "(SKILL.md unreadable)",
                "tools": ", ".join(meta.tools) if meta else "",
                "last": last,
            }
            for record, meta, last in await dash.door.reports.skills()
        ]
        return dash.render(request, "skills.html", session, skills=skills)

    return [dash.page("/skills", listing)]


PAGE = Page("Skills", "/skills", routes)
