"""Memory: the memory files, listed and read (never written) through MemoryStore, whose path
checks keep every read inside the memory folder."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure.dashboard.auth import Session
from augure.dashboard.web import Dash, Page
from augure.memory.store import MemoryPathError


def routes(dash: Dash) -> list[Route]:
    door = dash.door

    async def listing(request: Request, session: Session) -> Response:
        path = request.query_params.get("path")
        content = None
        if path:
            try:
                content = door.reports.read_memory(path)
            except (MemoryPathError, FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
                return dash.render(request, "missing.html", session, status=404)
        return dash.render(
            request,
            "memory.html",
            session,
            files=door.reports.memory_files(),
            path=path,
            content=content,
        )

    return [dash.page("/memory", listing)]


PAGE = Page("Memory", "/memory", routes)
