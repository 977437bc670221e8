"""What every page module is given: the state it serves, the sessions, and one way to render
and route."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import jinja2
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from augure.approval.shown import visible
from augure.core.door.doors import ReadingDoor
from augure.dashboard.auth import Session, Sessions, guarded, no_store

TEMPLATES = Path(__file__).parent / "templates"

# What a finished action says on the page it returns to; the query names one of these only,
# so no text of a link's choosing is ever shown.
NOTES = {
    "approved": "Approved.",
    "rejected": "Rejected.",
    "decided": "That request was already decided.",
    "revoked": "Rule revoked.",
    "gone": "That no longer exists.",
    "paused": "All scheduled jobs paused.",
    "resumed": "All scheduled jobs resumed.",
    "job-paused": "Job paused: its runs are skipped until it is resumed.",
    "job-resumed": "Job resumed: it runs again from its next run.",
    "cancelled": "Task cancelled; its work was stopped.",
    "ended": "That task was no longer running; nothing was cancelled.",
    "requested": "The job will run within a second or two (or when the scheduler next runs).",
    "later": "No bot is running: the job will run when `augure run` starts.",
    "elsewhere": "That task runs in the bot: cancel it in Telegram with /tasks.",
}


@dataclass(frozen=True)
class Page:
    """One entry of the menu; `routes` gives its pages and actions (POST) given the Dash."""

    title: str
    path: str
    routes: Callable[[Dash], list[Route]]


@dataclass
class Dash:
    door: ReadingDoor
    sessions: Sessions
    templates: Jinja2Templates
    menu: tuple[Page, ...] = ()
    base: str = ""  # the secret path prefix every page and action is served under

    def render(
        self,
        request: Request,
        template: str,
        session: Session | None = None,
        status: int = 200,
        **context: Any,
    ) -> Response:
        note = NOTES.get(request.query_params.get("note", ""))
        base = {
            "base": self.base,
            "csrf": session.csrf if session else "",
            "menu": self.menu if session else (),
            "here": request.url.path.removeprefix(self.base) or "/",
            "note": note,
            "clean": self.clean,
        }
        response: Response = self.templates.TemplateResponse(
            request, template, base | context, status_code=status
        )
        return no_store(response)

    def clean(self, text: str) -> str:
        """What any record may show: secrets masked, and every character that could hide or
        reorder text (bidi overrides, zero-width) as a visible escape (docs/security.md). Line
        breaks and tabs keep the layout."""
        lines = self.door.reports.clean(text).split("\n")
        return "\n".join("\t".join(map(visible, line.split("\t"))) for line in lines)

    def refuse(self, request: Request, status: int) -> Response:
        if status == 401:
            return self.render(request, "login.html", status=401)
        return self.render(request, "refused.html", status=status)

    def page(self, path: str, view: Callable[[Request, Session], Awaitable[Response]]) -> Route:
        return Route(path, guarded(self.sessions, self.refuse, page=view), methods=["GET"])

    def action(
        self, path: str, act: Callable[[Request, Session, FormData], Awaitable[Response]]
    ) -> Route:
        async def within(request: Request, session: Session, form: FormData) -> Response:
            # Pages name their paths from the dashboard's root (`back("/jobs", ...)`); the
            # browser must be sent under the prefix, where its cookie goes.
            response = await act(request, session, form)
            location = response.headers.get("location", "")
            if location.startswith("/"):
                response.headers["location"] = self.base + location
            return response

        return Route(path, guarded(self.sessions, self.refuse, action=within), methods=["POST"])


def back(to: str, note: str, **query: str) -> Response:
    """After an action: see the page again (303, so a reload never repeats the POST)."""
    return RedirectResponse(f"{to}?{urlencode({**query, 'note': note})}", status_code=303)


def templates(zone: str) -> Jinja2Templates:
    # autoescape on for every template: records hold untrusted text (web pages, emails).
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined
    )
    tz = ZoneInfo(zone)

    def when(timestamp: float | None) -> str:
        if timestamp is None:
            return ""
        return datetime.fromtimestamp(timestamp, tz).strftime("%Y-%m-%d %H:%M:%S")

    environment.filters["when"] = when
    return Jinja2Templates(env=environment)
