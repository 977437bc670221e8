"""Tool profiles (docs/reference/limits.md) through the real bot: refusals, costs, added approval,
restarts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from augure.tools.base import Egress, RunContext, tool
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import (
    approval_message,
    augure,
    buttons,
    delivered,
    environment,
    final_reply,
    hello,
    soon,
    tool_results,
)
from tests.e2e.test_email import FRIEND, mail, mail_server  # noqa: F401  (fixtures)
from tests.fakes.mail import FakeMail
from tests.fakes.openai import text
from tests.fakes.openai import tool as call

QUOTES: list[str] = []


@tool("stock_quote", egress=Egress.READ_ONLY)
async def stock_quote(ctx: RunContext, symbol: str) -> str:
    """The price of a stock (a paid API)."""
    QUOTES.append(symbol)
    return f"{symbol}: 101.5"


class Clock:
    """The limits' clock, moved by the test."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


PROFILES = {
    "paid": {
        "origins": ["*"],
        "tools": {"stock_*": {"cost_per_call": 0.02, "max_cost_per_day": 0.05}},
    },
    "jobs": {"origins": ["job"], "tools": {"stock_quote": {"requires_approval": True}}},
    "mail": {"origins": ["chat"], "tools": {"email": {"per_day": 5}}},
}


pytestmark = pytest.mark.tools(stock_quote, reset=QUOTES.clear)


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {"AUGURE__PROFILES": json.dumps(PROFILES), "AUGURE__AGENT__TIMEZONE": "Europe/Paris"}


def at_noon() -> Clock:
    return Clock(datetime(2026, 11, 25, 11, 0, tzinfo=UTC))  # 12:00 in Paris


def set_clock(bot: Bot, clock: Clock) -> None:
    assert bot.core is not None
    bot.core.executor.limits.clock = clock


async def quote(bot: Bot, n: int) -> str:
    bot.llm.script(call("stock_quote", {"symbol": "ACME"}), text(f"done {n}"))
    bot.telegram.inject_message(OWNER, f"price {n}")
    await final_reply(bot, f"done {n}")
    return tool_results(bot.llm)[-1]  # the history holds the earlier ones


COST_REFUSAL = (
    "Tool call refused: max_cost_per_day of $0.05 for stock_* ($0.04 spent today) (profile paid)."
)


async def test_a_cost_cap_stops_a_paid_tool_mid_day_and_resets_the_next_day(bot: Bot) -> None:
    clock = at_noon()
    set_clock(bot, clock)
    assert await quote(bot, 1) == "ACME: 101.5"
    assert await quote(bot, 2) == "ACME: 101.5"
    assert await quote(bot, 3) == COST_REFUSAL  # 0.06 would pass 0.05
    assert QUOTES == ["ACME", "ACME"]
    assert bot.core is not None
    refused = await bot.core.audit.listing(status="refused")
    assert [(r["tool"], r["reason"]) for r in refused] == [("stock_quote", COST_REFUSAL)]
    assert refused[0]["started_at"] is None  # it never ran

    clock.now += timedelta(hours=11)  # 23:00 in Paris: still the same day there
    assert await quote(bot, 4) == COST_REFUSAL
    clock.now += timedelta(hours=1, minutes=1)  # 00:01 in Paris: a new day
    assert await quote(bot, 5) == "ACME: 101.5"
    assert QUOTES == ["ACME"] * 3


async def test_limits_survive_a_restart(bot: Bot) -> None:
    clock = at_noon()
    set_clock(bot, clock)
    assert await quote(bot, 1) == "ACME: 101.5"
    assert await quote(bot, 2) == "ACME: 101.5"
    await bot.restart()
    set_clock(bot, clock)
    assert await quote(bot, 3) == COST_REFUSAL
    assert QUOTES == ["ACME", "ACME"]


async def test_a_job_profile_asks_although_chat_calls_do_not(bot: Bot) -> None:
    assert bot.core is not None
    await hello(bot.telegram)
    set_clock(bot, at_noon())
    assert await quote(bot, 1) == "ACME: 101.5"  # chat: read-only, no profile asks
    assert not any("reply_markup" in c.params for c in bot.telegram.sent("sendMessage"))

    await bot.core.scheduler.create(
        prompt="Check ACME", chat_id=str(OWNER), run_at=soon(1), job_id="acme"
    )
    bot.llm.script(call("stock_quote", {"symbol": "ACME"}), text("ACME checked."))
    request = await approval_message(bot)
    assert "stock_quote" in request["text"] and "(job)" in request["text"]
    assert QUOTES == ["ACME"]  # nothing ran before the press
    bot.telegram.press_button(OWNER, request["message_id"], buttons(request)["Approve"])
    await delivered(bot.telegram, "ACME checked.")
    assert QUOTES == ["ACME", "ACME"]


async def test_a_rejected_call_gives_its_count_back(bot: Bot) -> None:
    assert bot.core is not None
    await hello(bot.telegram)
    set_clock(bot, at_noon())
    for n in range(3):
        await bot.core.scheduler.create(
            prompt=f"Check ACME {n}", chat_id=str(OWNER), run_at=soon(1), job_id=f"acme-{n}"
        )
        bot.llm.script(call("stock_quote", {"symbol": "ACME"}), text(f"job {n}"))
        request = await approval_message(bot, count=n + 1)
        bot.telegram.press_button(OWNER, request["message_id"], buttons(request)["Reject"])
        await delivered(bot.telegram, f"job {n}")
    # Three rejected calls of 0.02 each: none ran, so none counts against the 0.05 cap.
    assert await quote(bot, 1) == "ACME: 101.5"


async def test_augure_limits_and_status_show_todays_use(
    bot: Bot, bot_env: dict[str, str], tmp_path: Path
) -> None:
    await quote(bot, 1)
    # The bot's own settings, time zone included: "today" is the same day for both (between
    # 23:00 and midnight UTC it was not, with the zone left out).
    env = environment(bot.home, bot_environment(bot.home, bot.telegram, bot.llm) | bot_env)
    code, out, err = await augure("limits", "--json", env=env)
    assert code == 0, err
    rows = {row["profile"]: row for row in json.loads(out)}
    assert rows["paid"]["tools"] == "stock_*" and rows["paid"]["max_cost_per_day"] == 0.05
    assert rows["paid"]["used_today"] == 1 and rows["paid"]["cost_today"] == 0.02
    assert rows["mail"]["per_day"] == 5 and rows["mail"]["used_today"] == 0
    code, out, err = await augure("limits", env=env)
    assert code == 0, err
    assert "paid (*) stock_*: $0.02/$0.05 today" in out
    assert "mail (chat) email: 0/5 today" in out

    bot.telegram.inject_message(OWNER, "/status")
    await delivered(bot.telegram, "Limits:")
    status = bot.telegram.messages(OWNER)[-1]["text"]
    assert "paid (*) stock_*: $0.02/$0.05 today" in status
    assert "jobs (job) stock_quote: asks for approval" in status


@pytest.mark.system_package("dovecot-imapd")
class TestEmail:
    @pytest.fixture
    def bot_env(self, mail: FakeMail) -> dict[str, str]:  # noqa: F811
        settings = mail.tool_config()
        env = {
            f"AUGURE__TOOLS__EMAIL__{key.upper()}": str(value)
            for key, value in settings.items()
            if key not in ("username", "password")
        }
        return env | {
            "EMAIL_USERNAME": settings["username"],
            "EMAIL_PASSWORD": settings["password"],
            "AUGURE__PROFILES": json.dumps(PROFILES),
        }

    async def test_the_sixth_email_of_a_five_a_day_profile_is_refused_and_nothing_is_sent(
        self,
        bot: Bot,
        mail: FakeMail,  # noqa: F811
    ) -> None:
        assert bot.core is not None
        set_clock(bot, at_noon())
        await bot.core.audit.add_rule("allow", f"email:send:to={FRIEND}", "owner")
        for n in range(1, 7):
            args = {"action": "send", "to": FRIEND, "subject": f"note {n}", "body": "hi"}
            bot.llm.script(call("email", args), text(f"mail {n}"))
            bot.telegram.inject_message(OWNER, f"send note {n}")
            await final_reply(bot, f"mail {n}")
        assert (
            tool_results(bot.llm)[-1]
            == "Tool call refused: per_day limit of 5 for email (profile mail)."
        )
        assert len(mail.received) == 5
        assert not any("reply_markup" in c.params for c in bot.telegram.sent("sendMessage"))
        newest = (await bot.core.audit.listing(tool="email"))[0]
        assert newest["status"] == "refused" and "note 6" in newest["input"]
