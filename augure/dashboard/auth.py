"""Who may use the dashboard: a session cookie won with a one-time login token, and a CSRF
token per session on every state-changing request (docs/reference/dashboard.md#access).

Sessions live in this process's memory: they end with it, like the login tokens they came from.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from augure.common.logins import LoginTokens

COOKIE = "augure_session"
SESSION_SECONDS = 12 * 3600.0  # a working day; then a new token from /dashboard or the CLI
CSRF_FIELD = "csrf"


@dataclass
class Session:
    csrf: str
    expires: float


@dataclass
class Sessions:
    logins: LoginTokens
    secure_cookie: bool  # off only on loopback, where there is no TLS to require
    # The cookie's Path: the dashboard's per-run secret path prefix. Cookies ignore ports, so
    # without it the browser would hand the session to any server on another 127.0.0.1 port.
    path: str = "/"
    clock: Callable[[], float] = time.monotonic
    _live: dict[str, Session] = field(default_factory=dict)

    def open(self, token: str) -> str | None:
        """A new session id for a live one-time token; None when the token is spent or wrong."""
        if not self.logins.redeem(token):
            return None
        session_id = secrets.token_urlsafe(32)
        self._live[session_id] = Session(secrets.token_urlsafe(32), self.clock() + SESSION_SECONDS)
        return session_id

    def of(self, request: Request) -> Session | None:
        session_id = request.cookies.get(COOKIE)
        if not session_id:
            return None
        session = self._live.get(session_id)
        if session is None:
            return None
        if session.expires <= self.clock():
            del self._live[session_id]
            return None
        return session

    def close(self, request: Request) -> None:
        self._live.pop(request.cookies.get(COOKIE, ""), None)

    def set_cookie(self, response: Response, session_id: str) -> None:
        response.set_cookie(
            COOKIE,
            session_id,
            max_age=int(SESSION_SECONDS),
            httponly=True,
            samesite="strict",
            secure=self.secure_cookie,
            path=self.path,
        )

    def delete_cookie(self, response: Response) -> None:
        response.delete_cookie(COOKIE, path=self.path)


def csrf_ok(session: Session, form: FormData) -> bool:
    offered = form.get(CSRF_FIELD)
    return isinstance(offered, str) and hmac.compare_digest(offered, session.csrf)


PageHandler = Callable[[Request, Session], Awaitable[Response]]
ActionHandler = Callable[[Request, Session, FormData], Awaitable[Response]]


def guarded(
    sessions: Sessions,
    refuse: Callable[[Request, int], Response],
    page: PageHandler | None = None,
    action: ActionHandler | None = None,
) -> Callable[[Request], Awaitable[Response]]:
    """A route that answers 401 without a session, and for a POST 403 without its CSRF
    token; `refuse(request, status)` renders the refusal (the login page for 401)."""

    async def endpoint(request: Request) -> Response:
        session = sessions.of(request)
        if session is None:
            return refuse(request, 401)
        if request.method == "POST":
            assert action is not None
            form = await request.form()
            if not csrf_ok(session, form):
                return refuse(request, 403)
            return await action(request, session, form)
        assert page is not None
        return await page(request, session)

    return endpoint


def no_store(response: Response) -> Response:
    """Pages carry private data: no cache keeps them, no frame shows them."""
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    # Same-origin only: another site never learns the secret path, while the dashboard's own
    # forms keep a real Origin header ("no-referrer" makes browsers send "Origin: null").
    response.headers["Referrer-Policy"] = "same-origin"
    # No inline script runs, whatever a record's text holds; styles come from our file only.
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    )
    return response
