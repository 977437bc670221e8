"""One-time login tokens for the dashboard (docs/reference/dashboard.md#access).

They live in the process's memory: the dashboard that accepts them runs in the process that
issues them (`augure run` for Telegram's /dashboard, `augure dashboard` for its printed URL),
and a restart voids every token, which is what a one-time secret should do.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable

TOKEN_BYTES = 32
TOKEN_SECONDS = 600.0  # ten minutes: long enough to open a link, short enough to go stale


class LoginTokens:
    def __init__(
        self, lifetime: float = TOKEN_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.lifetime = lifetime
        self.clock = clock
        self._expiry: dict[str, float] = {}
        # Where tokens are redeemed ("http://127.0.0.1:8765"); None while no dashboard serves.
        self.served_at: str | None = None

    def issue(self) -> str:
        self._forget_expired()
        token = secrets.token_urlsafe(TOKEN_BYTES)
        self._expiry[token] = self.clock() + self.lifetime
        return token

    def login_url(self) -> str | None:
        """A fresh one-time login link, or None while no dashboard serves."""
        if self.served_at is None:
            return None
        return f"{self.served_at}/login?token={self.issue()}"

    def redeem(self, offered: str) -> bool:
        """True once for a live token; a second use, an expired or unknown token is False."""
        self._forget_expired()
        # Compared in constant time with each live token: the offered one may be a guess.
        match = next((t for t in self._expiry if hmac.compare_digest(t, offered)), None)
        if match is None:
            return False
        del self._expiry[match]
        return True

    def _forget_expired(self) -> None:
        now = self.clock()
        for token in [t for t, expiry in self._expiry.items() if expiry <= now]:
            del self._expiry[token]
