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

from augure.core.door.doors import ReadingDoor
from augure.dashboard.auth import Session, Sessions
from augure.dashboard.hosts import OwnAddressOnly
from augure.dashboard.pages import PAGES
from augure.dashboard.web import Dash, templates

STATIC = Path(__file__).parent / "static"


def build(
    door: ReadingDoor, *, secure_cookie: bool, base: str, hosts: frozenset[str] | None
) -> OwnAddressOnly:
    """The application: `base` is the secret path prefix of every page (the session cookie's
    Path); `hosts` the Host values it answers (None: any; see augure/dashboard/hosts.py)."""
    sessions = Sessions(door.logins, secure_cookie, path=base)
    dash = Dash(door, sessions, templates(door.config.zone), PAGES, base)

    async def login(request: Request) -> Response:
        """Only a POST logs in: the link's button, or a pasted token. A GET of the link (the
        printed or sent one) shows the page with its token filled in and spends nothing: a
        link preview's crawler, or anything else that follows links, only ever GETs
        (docs/security.md, "The reply is a way out")."""
        if request.method != "POST":
            shown = request.query_params.get("token", "").strip()
            return dash.render(request, "login.html", status=200 if shown else 401, token=shown)
        token = (await request.form()).get("token")
        if not isinstance(token, str) or not token.strip():
            return dash.render(request, "login.html", status=401)
        session_id = sessions.open(token.strip())
        if session_id is None:
            return dash.render(request, "login.html", status=401, spent=True)
        # Redirected to a URL without the token, so it is not left in the history or address bar.
        response = RedirectResponse(f"{base}/", status_code=303)
        sessions.set_cookie(response, session_id)
        return response

    async def logout(request: Request, session: Session, form: FormData) -> Response:
        sessions.close(request)
        response = RedirectResponse("/login", status_code=303)
        sessions.delete_cookie(response)
        return response

    async def way_in(request: Request) -> Response:
        """Outside the prefix there is only the way in: nothing here tells where pages are."""
        return dash.render(request, "login.html", status=401)

    pages: list[Route] = [dash.action("/logout", logout)]
    for page in PAGES:
        pages += page.routes(dash)
    routes: list[Route | Mount] = [
        Route("/", way_in),
        Route("/login", login, methods=["GET", "POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Mount(base, routes=pages),
    ]
    return OwnAddressOnly(Starlette(routes=routes), hosts)


class QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The process's own SIGINT/SIGTERM handlers stop everything, this server included.
        yield
