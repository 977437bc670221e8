"""/usage: where the tokens went — last turn by part, today, and in total; then spend against
the caps."""

from __future__ import annotations

from augure.channels.telegram.commands.command import Asked, Command
from augure.config.llm import LLMConfig
from augure.core.door.types import Tokens
from augure.core.spend import report_lines

PARTS = ("system_prompt", "memory", "tool_schemas", "history", "output")


def cost(llm: LLMConfig, prompt: int, completion: int) -> str:
    dollars = llm.dollars(prompt, completion)
    if dollars is None:
        return "cost unknown (set [llm] input_price_per_million and output_price_per_million)"
    return f"≈ ${dollars:.4f}"


def period(label: str, totals: Tokens, llm: LLMConfig) -> str:
    prompt, completion = totals.prompt_tokens, totals.completion_tokens
    return (
        f"{label}: {prompt} in + {completion} out in {totals.turns} turn(s), "
        f"{cost(llm, prompt, completion)}"
    )


async def usage_report(asked: Asked) -> str:
    door = asked.door
    usage = await door.reports.usage(str(asked.chat_id))
    last, today, total = usage.last, usage.today, usage.total
    spend = report_lines(await door.reports.spend())
    if last is None:
        return "\n".join(["No turn of this chat recorded yet.", *spend])
    llm = door.config.llm
    breakdown = last.breakdown
    shares = ", ".join(f"{part.replace('_', ' ')} ~{breakdown.get(part, 0)}" for part in PARTS)
    lines = [
        f"Last turn ({last.model}, {last.llm_calls} model call(s)): "
        f"{last.prompt_tokens} in + {last.completion_tokens} out tokens, "
        f"{cost(llm, last.prompt_tokens, last.completion_tokens)}",
        f"  estimated split: {shares}",
        period("Today", today, llm),
        period("Total", total, llm),
        *spend,
    ]
    return "\n".join(lines)


async def on_usage(asked: Asked) -> None:
    await asked.say(await usage_report(asked))


USAGE = Command(
    "usage",
    menu="Tokens and cost: last turn; spend today and this month against the caps",
    help="/usage — tokens and estimated cost; /memory — memory files",
    handler=on_usage,
)
