"""One-time login tokens: 32 random bytes, single use, ten minutes."""

from __future__ import annotations

import base64

from augure.common.logins import TOKEN_SECONDS, LoginTokens


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_works_once() -> None:
    tokens = LoginTokens()
    token = tokens.issue()
    assert len(base64.urlsafe_b64decode(token + "=")) == 32
    assert tokens.redeem(token)
    assert not tokens.redeem(token)


def test_a_token_expires_after_ten_minutes() -> None:
    clock = Clock()
    tokens = LoginTokens(clock=clock)
    late, early = tokens.issue(), tokens.issue()
    clock.now += TOKEN_SECONDS - 1
    assert tokens.redeem(early)
    clock.now += 1
    assert not tokens.redeem(late)


def test_unknown_tokens_and_no_dashboard() -> None:
    tokens = LoginTokens()
    tokens.issue()
    assert not tokens.redeem("")
    assert not tokens.redeem("a-guess")
    assert tokens.login_url() is None  # nothing serves them
    tokens.served_at = "http://127.0.0.1:8765"
    url = tokens.login_url()
    assert url is not None and url.startswith("http://127.0.0.1:8765/login?token=")
    assert tokens.redeem(url.split("token=")[1])
