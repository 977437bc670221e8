"""Approvals: pending requests, decided through the same gate as Telegram's buttons.

A decision here settles the gate's waiting call exactly as a button press does; the gate then
edits the Telegram request message. `decided_by` is recorded as `dashboard`.
"""

from __future__ import annotations

import json

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure.common.ports import Decision
from augure.dashboard.auth import Session
from augure.dashboard.web import Dash, Page, back

DECIDED_BY = "dashboard"


def shown_arguments(raw: str) -> str:
    """The stored (already redacted) arguments, indented for reading."""
    try:
        return json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
    except ValueError:
        return raw


def routes(dash: Dash) -> list[Route]:
    async def listing(request: Request, session: Session) -> Response:
        pending = await dash.door.reports.pending_approvals(limit=200)
        shown = [shown_arguments(row.input) for row in pending]
        listed = list(zip(pending, shown, strict=True))
        return dash.render(request, "approvals.html", session, pending=listed)

    async def decide(request: Request, session: Session, form: FormData) -> Response:
        invocation_id = request.path_params["id"]
        approve = request.path_params["decision"] == "approve"
        reason = str(form.get("reason") or "").strip()[:500] or None
        verdict = await dash.door.owner.decide(
            invocation_id,
            Decision.APPROVED if approve else Decision.REJECTED,
            DECIDED_BY,
            reason=None if approve else reason,
        )
        if verdict is None:
            return back("/approvals", "decided")
        return back("/approvals", "approved" if approve else "rejected")

    return [
        dash.page("/approvals", listing),
        dash.action("/approvals/{id}/{decision:str}", decide),
    ]


PAGE = Page("Approvals", "/approvals", routes)
