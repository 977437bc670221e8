"""Invocations: the audit trail, filtered by tool, status and origin, a page at a time; each
record's detail shows its redacted input and output, escaped."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure.core.door.types import INVOCATION_FILTERS, INVOCATION_STATUSES
from augure.dashboard.auth import Session
from augure.dashboard.pages.approvals import shown_arguments
from augure.dashboard.web import Dash, Page

# Who starts work (the first link of an origin chain); the filter shows what each started.
ORIGINS = ("chat", "job", "heartbeat", "dashboard", "cli")


def routes(dash: Dash) -> list[Route]:
    async def listing(request: Request, session: Session) -> Response:
        query = request.query_params
        filters = {name: query.get(name, "") for name in INVOCATION_FILTERS}
        page = await dash.door.reports.invocations(filters, query.get("after"))
        return dash.render(
            request,
            "invocations.html",
            session,
            page=page,
            filters=filters,
            tools=await dash.door.reports.tool_names(),
            statuses=INVOCATION_STATUSES,
            origins=ORIGINS,
        )

    async def detail(request: Request, session: Session) -> Response:
        record = await dash.door.reports.invocation(request.path_params["id"])
        if record is None:
            return dash.render(request, "missing.html", session, status=404)
        shown = shown_arguments(record.input)
        return dash.render(request, "invocation.html", session, record=record, shown=shown)

    return [dash.page("/invocations", listing), dash.page("/invocations/{id}", detail)]


PAGE = Page("Invocations", "/invocations", routes)
