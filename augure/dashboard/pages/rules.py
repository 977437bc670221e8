"""Rules: the always-allow and deny rules, each with Revoke."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure.dashboard.auth import Session
from augure.dashboard.web import Dash, Page, back


def routes(dash: Dash) -> list[Route]:
    async def listing(request: Request, session: Session) -> Response:
        return dash.render(request, "rules.html", session, rules=await dash.door.owner.rules())

    async def revoke(request: Request, session: Session, form: FormData) -> Response:
        revoked = await dash.door.owner.revoke_rule(request.path_params["id"])
        return back("/rules", "revoked" if revoked else "gone")

    return [dash.page("/rules", listing), dash.action("/rules/{id:int}/revoke", revoke)]


PAGE = Page("Rules", "/rules", routes)
