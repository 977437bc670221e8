"""The dashboard's web application: login, the pages, and the one stylesheet."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from augure.app import Core
from augure.dashboard.auth import Session, Sessions
from augure.dashboard.pages import PAGES
from augure.dashboard.web import Dash, templates

STATIC = Path(__file__).parent / "static"


def build(core: Core, *, secure_cookie: bool) -> Starlette:
    sessions = Sessions(core.logins, secure_cookie)
    dash = Dash(core, sessions, templates(core.config.zone), PAGES)

    async def login(request: Request) -> Response:
        """GET with ?token= (the printed or sent link) or POST of the pasted token."""
        if request.method == "POST":
            token = (await request.form()).get("token")
        else:
            token = request.query_params.get("token")
        if not isinstance(token, str) or not token.strip():
            return dash.render(request, "login.html", status=401)
        session_id = sessions.open(token.strip())
        if session_id is None:
            return dash.render(request, "login.html", status=401, spent=True)
        # Redirected to a URL without the token, so it is not left in the history or address bar.
        response = RedirectResponse("/", status_code=303)
        sessions.set_cookie(response, session_id)
        return response

    async def logout(request: Request, session: Session, form: FormData) -> Response:
        sessions.close(request)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie("augure_session")
        return response

    routes: list[Route | Mount] = [
        Route("/login", login, methods=["GET", "POST"]),
        dash.action("/logout", logout),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    for page in PAGES:
        routes += page.routes(dash)
    return Starlette(routes=routes)


class QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The process's own SIGINT/SIGTERM handlers stop everything, this server included.
        yield
