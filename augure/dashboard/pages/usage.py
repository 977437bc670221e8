"""Usage: tokens and estimated cost per day, as a bar chart drawn on the server (inline SVG)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from augure.config.llm import LLMConfig
from augure.core.door.types import Day
from augure.dashboard.auth import Session
from augure.dashboard.web import Dash, Page

DAYS = 30
CHART_WIDTH, CHART_HEIGHT = 720, 200


PRICES_UNSET = "Costs are unknown: set [llm] input_price_per_million and output_price_per_million."


def priced(llm: LLMConfig) -> bool:
    return llm.dollars(0, 0) is not None


def cost(llm: LLMConfig, prompt: int, completion: int) -> str:
    dollars = llm.dollars(prompt, completion)
    return "unknown" if dollars is None else f"≈ ${dollars:.4f}"


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    prompt_height: float
    completion_height: float
    label: str  # the bar's tooltip


def bars(days: list[Day], llm: LLMConfig) -> list[Bar]:
    peak = max((day.tokens for day in days), default=0) or 1
    slot = CHART_WIDTH / max(len(days), 1)
    drawn = []
    for n, day in enumerate(days):
        spend = cost(llm, day.prompt_tokens, day.completion_tokens)
        drawn.append(
            Bar(
                x=round(n * slot + 1, 1),
                width=round(max(slot - 2, 1), 1),
                prompt_height=round(day.prompt_tokens / peak * CHART_HEIGHT, 1),
                completion_height=round(day.completion_tokens / peak * CHART_HEIGHT, 1),
                label=f"{day.day}: {day.prompt_tokens} in + {day.completion_tokens} out, {spend}",
            )
        )
    return drawn


def routes(dash: Dash) -> list[Route]:
    async def usage(request: Request, session: Session) -> Response:
        llm = dash.door.config.llm
        days = await dash.door.reports.usage_per_day(DAYS)
        rows = [(day, cost(llm, day.prompt_tokens, day.completion_tokens)) for day in days]
        spend = await dash.door.reports.spend()
        return dash.render(
            request,
            "usage.html",
            session,
            bars=bars(days, llm),
            rows=list(reversed(rows)),
            width=CHART_WIDTH,
            height=CHART_HEIGHT,
            days=DAYS,
            prices_unset=None if priced(llm) else PRICES_UNSET,
            spend=list(zip(spend.caps, (spend.today, spend.month), strict=True)),
        )

    return [dash.page("/usage", usage)]


PAGE = Page("Usage", "/usage", routes)
