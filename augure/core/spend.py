"""The `[budget]` gate over the spend ledger (docs/reference/spend.md): checked before each
model call, told of each answer, and the report `/usage`, `augure usage` and the dashboard
show, built and rendered here only."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from augure.agent import tokens
from augure.config.settings import Config, source_of
from augure.config.spend import BudgetConfig, Prices
from augure.llm.client import LLMResponse
from augure.llm.models import ChatModel, Models
from augure.llm.spend import SPEECH, BudgetReached
from augure.store.spend import CallTotals, Ledger, ModelCall, Period

log = logging.getLogger(__name__)

Tell = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class Cap:
    name: str  # "daily" or "monthly"
    key: str  # the setting: "daily_usd"
    usd: float  # 0: no cap
    spent: float
    period: str  # "day:2026-11-26"
    until: str  # when it lifts, in words

    @property
    def reached(self) -> bool:
        return bool(self.usd) and self.spent >= self.usd


class SpendCaps:
    """The `[budget]` caps over the spend ledger: checked before each model call (the
    `SpendGate` every call passes), told of each answer, and the report of what was spent."""

    def __init__(
        self,
        config: Config,
        ledger: Ledger,
        tell: Tell | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.config = config
        self.settings: BudgetConfig = config.budget
        self.ledger = ledger
        self.tell = tell
        self.clock = clock

    def today(self) -> tuple[str, str]:
        now = self.clock().astimezone(ZoneInfo(self.config.zone))
        return now.strftime("%Y-%m-%d"), now.strftime("%Y-%m")

    async def caps(self) -> list[Cap]:
        day, month = self.today()
        spent_day, spent_month = await self.ledger.spent(day, month)
        return [
            Cap("daily", "daily_usd", self.settings.daily_usd, spent_day, f"day:{day}", "tomorrow"),
            Cap(
                "monthly",
                "monthly_usd",
                self.settings.monthly_usd,
                spent_month,
                f"month:{month}",
                "next month",
            ),
        ]

    async def reached(self) -> BudgetReached | None:
        """The first cap reached, as the refusal a caller raises; None while under both."""
        for cap in await self.caps():
            if cap.reached:
                return BudgetReached(self._line(cap), cap.name)
        return None

    def _line(self, cap: Cap) -> str:
        # Only a cap that is set can be reached: this names where it was set.
        where = source_of(self.config, "budget", cap.key)
        return (
            f"the {cap.name} budget of ${cap.usd:.2f} is reached (${cap.spent:.4f} spent): "
            f"raise [budget] {cap.key} ({where}), or wait until {cap.until}"
        )

    async def check(self, kind: str, model: str, unpriced: str | None = None) -> None:
        if not self.settings.capped:
            return  # nothing to read before every call
        day, month = self.today()
        if unpriced is not None:  # its cost could not count against the cap: not called
            await self.ledger.record(ModelCall(day, month, kind, model, outcome="skipped"))
            line = f"no price for model {model!r}: set {unpriced}, or remove the [budget] cap"
            raise BudgetReached(line, "price")
        refusal = await self.reached()
        if refusal is None:
            return
        await self.ledger.record(ModelCall(day, month, kind, model, outcome="skipped"))
        cap = next(cap for cap in await self.caps() if cap.name == refusal.cap)
        await self._notice(cap.period, "cap", self._cap_notice(cap))
        raise refusal

    async def before_work(self, kind: str, models: ChatModel) -> None:
        """The check before a job, a skill or the heartbeat begins: the caps, and the price of
        the model that work asks first (a bare client in tests: the primary's)."""
        if isinstance(models, Models):
            first = models.chain(kind)[0]
            await self.check(kind, first.model, first.unpriced)
        else:
            await self.check(kind, self.config.llm.model)

    async def record(
        self, kind: str, model: str, prices: Prices, response: LLMResponse, sent: object = None
    ) -> None:
        day, month = self.today()
        prompt, completion = response.prompt_tokens, response.completion_tokens
        estimated = not response.usage_reported
        if estimated:
            prompt, completion = estimate(sent, response)
        cost = prices.dollars(prompt, completion, response.cached_tokens)
        call = ModelCall(
            day,
            month,
            kind,
            model,
            prompt_tokens=prompt,
            cached_tokens=response.cached_tokens,
            completion_tokens=completion,
            cost_usd=cost,
            estimated=estimated,
        )
        await self._account(call)

    async def record_speech(self, model: str, characters: int, cost: float | None) -> None:
        """A spoken reply: its characters stand in the prompt-token column, its cost at the
        voice's price per character (unknown when no price is set)."""
        day, month = self.today()
        await self._account(
            ModelCall(day, month, SPEECH, model, prompt_tokens=characters, cost_usd=cost)
        )

    async def _account(self, call: ModelCall) -> None:
        """Record the call, then tell the owner of a warning share or a cap it crossed."""
        await self.ledger.record(call)
        if not self.settings.capped:
            return
        for cap in await self.caps():
            if cap.reached:
                await self._notice(cap.period, "cap", self._cap_notice(cap))
            elif cap.usd and cap.spent >= cap.usd * self.settings.warn_at:
                share = round(cap.spent / cap.usd * 100)
                await self._notice(
                    cap.period,
                    "warn",
                    f"Spend: ${cap.spent:.4f} of the {cap.name} budget of ${cap.usd:.2f} "
                    f"({share}%). At the cap, chats get a one-line refusal and jobs, skills "
                    f"and the heartbeat are skipped until {cap.until}.",
                )

    def _cap_notice(self, cap: Cap) -> str:
        return (
            f"Spend: {self._line(cap)}. Until then no model is called: chats get one line "
            "saying so, and jobs, skills and the heartbeat are skipped."
        )

    async def _notice(self, period: str, kind: str, text: str) -> None:
        """Once per period, across restarts: claimed in state.db before it is sent. A
        terminal command (no one to tell) leaves the claim to the running bot."""
        if self.tell is None:
            log.warning("%s", text)
            return
        if not await self.ledger.claim_notice(period, kind):
            return
        log.warning("%s", text)
        if self.tell is not None:
            try:
                await self.tell(text)
            except Exception:
                log.exception("could not tell the owner about the budget")

    async def report(self) -> SpendReport:
        day, month = self.today()
        return SpendReport(
            caps=await self.caps(),
            warn_at=self.settings.warn_at,
            today=await self.ledger.period("day", day),
            month=await self.ledger.period("month", month),
        )


@dataclass(frozen=True)
class SpendReport:
    caps: list[Cap]
    warn_at: float
    today: Period
    month: Period


def estimate(sent: object, response: LLMResponse) -> tuple[int, int]:
    """(prompt, completion) tokens of a call whose answer reported no usage: what was sent,
    as JSON, and what came back, by the tokenizer or its estimate."""
    asked = tokens.count(json.dumps(sent, ensure_ascii=False, default=str)) if sent else 0
    produced = (response.content or "") + "".join(
        call.name + call.arguments for call in response.tool_calls
    )
    return asked, tokens.count(produced)


def _tally_json(tally: CallTotals) -> dict[str, Any]:
    return {
        "calls": tally.calls,
        "skipped": tally.skipped,
        "prompt_tokens": tally.prompt_tokens,
        "cached_tokens": tally.cached_tokens,
        "completion_tokens": tally.completion_tokens,
        "usd": round(tally.usd, 6),
        "unpriced_calls": tally.unpriced_calls,
        "estimated_calls": tally.estimated_calls,
    }


def _period_json(period: Period) -> dict[str, Any]:
    return {
        "period": period.key,
        **_tally_json(period.total),
        "by_origin": {name: _tally_json(t) for name, t in period.by_origin.items()},
        "by_model": {name: _tally_json(t) for name, t in period.by_model.items()},
    }


def report_json(report: SpendReport) -> dict[str, Any]:
    """`augure usage --json` (docs/reference/spend.md#augure-usage---json)."""
    return {
        "caps": {
            cap.name: {
                "usd": cap.usd,
                "spent_usd": round(cap.spent, 6),
                "reached": cap.reached,
                "setting": f"budget.{cap.key}",
            }
            for cap in report.caps
        },
        "warn_at": report.warn_at,
        "today": _period_json(report.today),
        "month": _period_json(report.month),
    }


def report_lines(report: SpendReport) -> list[str]:
    """Spend today and this month against the caps, split by kind of work: `/usage` and
    `augure usage` alike."""
    lines = []
    for cap, period in zip(report.caps, (report.today, report.month), strict=True):
        label = "Today" if cap.name == "daily" else "This month"
        if cap.usd:
            share = f"{cap.spent / cap.usd:.0%}"
            against = f" of the {cap.name} cap ${cap.usd:.2f} ({share})"
        else:
            against = f" (no {cap.name} cap: [budget] {cap.key})"
        lines.append(f"{label} ({period.key}): ${period.total.usd:.4f}{against}")
        lines += [f"  {name}: {_tally_line(t)}" for name, t in period.by_origin.items()]
        if len(period.by_model) > 1:
            models = ", ".join(
                f"{name} {t.calls} call(s)" for name, t in period.by_model.items() if t.calls
            )
            lines.append(f"  models: {models}")
    return lines


def _tally_line(tally: CallTotals) -> str:
    cached = f" ({tally.cached_tokens} cached)" if tally.cached_tokens else ""
    parts = [
        f"{tally.calls} call(s), {tally.prompt_tokens} in{cached} + "
        f"{tally.completion_tokens} out, ${tally.usd:.4f}"
    ]
    if tally.unpriced_calls:
        parts.append(f"{tally.unpriced_calls} of unknown cost (no price set)")
    if tally.estimated_calls:
        parts.append(f"{tally.estimated_calls} estimated (no usage reported)")
    if tally.skipped:
        parts.append(f"{tally.skipped} skipped at a cap")
    return "; ".join(parts)
