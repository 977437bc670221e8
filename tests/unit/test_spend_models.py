"""The model wrapper and the spend settings (docs/reference/spend.md): which faults give way
to the next model, which model a role asks first, what a call costs, and a cap reached in
the middle of a turn stopping the subagent the turn started."""

from __future__ import annotations

from pathlib import Path

import pytest

from augure.config.llm import Roles
from augure.config.settings import ConfigError, load_config
from augure.config.spend import Prices
from augure.llm.faults import Fault, LLMError
from augure.llm.models import Entry, Models
from augure.llm.spend import SUBAGENT, SUMMARY, working_as
from augure.store.spend import ModelCall
from tests.cores import Cores
from tests.fakes.model import Request, ScriptedModel, answer, call

PRICED = Prices(input_price_per_million=1.0, output_price_per_million=2.0)


def named(model: str, *script: object) -> ScriptedModel:
    scripted = ScriptedModel(*script)  # type: ignore[arg-type]
    scripted.model = model
    return scripted


def models(*entries: ScriptedModel, roles: Roles | None = None) -> Models:
    return Models([Entry(e.model, e, PRICED) for e in entries], roles or Roles())


@pytest.mark.parametrize(
    "fault",
    [Fault.RATE_LIMITED, Fault.UNAVAILABLE, Fault.TIMEOUT, Fault.UNREACHABLE, Fault.TOO_LONG],
)
async def test_a_fault_another_model_may_not_have_gives_way_to_the_next(fault: Fault) -> None:
    primary = named("big", LLMError("failed", fault=fault))
    backup = named("small", answer("from the backup"))
    response = await models(primary, backup).complete([{"role": "user", "content": "hi"}])
    assert response.content == "from the backup" and response.model == "small"


@pytest.mark.parametrize("fault", [Fault.KEY, Fault.ACCESS, Fault.MODEL, Fault.QUOTA, None])
async def test_a_fault_only_the_owner_can_fix_is_never_hidden_by_a_fallback(
    fault: Fault | None,
) -> None:
    primary = named("big", LLMError("refused", 401, fault=fault))
    backup = named("small", answer("never"))
    with pytest.raises(LLMError, match="refused"):
        await models(primary, backup).complete([{"role": "user", "content": "hi"}])
    assert backup.requests == []


async def test_a_role_asks_its_model_first_then_the_others_in_order() -> None:
    big, small, other = named("big"), named("small"), named("other")
    wrapper = models(big, small, other, roles=Roles(summary="small"))
    assert [e.model for e in wrapper.chain(SUMMARY)] == ["small", "big", "other"]
    assert [e.model for e in wrapper.chain("chat")] == ["big", "small", "other"]
    # A subagent's own model, on the primary's endpoint: its price is unknown, not the primary's.
    (own,) = wrapper.chain(SUBAGENT, "special")
    assert own.client is big and own.override == "special" and not own.prices.priced
    small.then(answer("summary"))
    with working_as(SUMMARY):
        assert (await wrapper.complete([])).model == "small"
    assert big.requests == []


def test_cached_tokens_are_priced_at_the_cached_rate_and_unknown_prices_are_none() -> None:
    prices = Prices(
        input_price_per_million=1.0,
        output_price_per_million=2.0,
        cached_input_price_per_million=0.1,
    )
    assert prices.dollars(1000, 10, cached_tokens=800) == pytest.approx(300 / 1e6)
    no_cached_rate = Prices(input_price_per_million=1.0)
    assert no_cached_rate.dollars(1000, 0, cached_tokens=800) == pytest.approx(1000 / 1e6)
    assert Prices().dollars(1000, 10) is None


def test_a_role_naming_no_configured_model_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text(
        '[llm]\nmodel = "big"\n[[llm.fallbacks]]\nmodel = "small"\n[llm.roles]\nsummary = "smal"\n'
    )
    with pytest.raises(ConfigError, match=r"roles\.summary names 'smal'.*'big', 'small'"):
        load_config(home=tmp_path)


def test_a_fallbacks_key_is_a_secret(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text(
        '[[llm.fallbacks]]\nmodel = "small"\napi_key = "sk-fallback-secret"\n'
    )
    assert load_config(home=tmp_path).secrets()["LLM_FALLBACK_1_API_KEY"] == "sk-fallback-secret"


async def test_a_cap_reached_by_the_turns_first_call_stops_the_subagent_it_starts(
    tmp_path: Path,
) -> None:
    (tmp_path / "augure.toml").write_text(
        "[telegram]\nallowed_users = [1]\n[budget]\ndaily_usd = 0.01\n"
        "[llm]\ninput_price_per_million = 1.0\n"
        '[agents.scout]\ninstructions = "Scouts."\ntools = []\n'
    )
    opened, model = Cores(), ScriptedModel()
    core = await opened.open(load_config(home=tmp_path), model=model)
    try:

        async def spend_then_delegate(request: Request) -> object:
            day, month = core.budget.today()  # this call's cost takes the day over its cap
            await core.budget.ledger.record(ModelCall(day, month, "chat", "x", cost_usd=1.0))
            return call("task", prompt="look", agent="scout")

        model.then(spend_then_delegate)
        reply = await core.agent.handle("1", "go")
        report = await core.budget.report()
    finally:
        await opened.close()
    assert len(model.requests) == 1  # neither the subagent nor the turn's next call was made
    assert "daily budget of $0.01 is reached" in reply.text
    skipped = {name: t.skipped for name, t in report.today.by_origin.items() if t.skipped}
    assert skipped == {"subagent": 1, "chat": 1}


async def test_under_a_cap_a_fallback_with_no_price_is_not_tried(tmp_path: Path) -> None:
    (tmp_path / "augure.toml").write_text(
        "[telegram]\nallowed_users = [1]\n[budget]\ndaily_usd = 5.0\n"
        '[llm]\nmodel = "big"\ninput_price_per_million = 1.0\n'
        '[[llm.fallbacks]]\nmodel = "small"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    opened = Cores()
    model = named("big", LLMError("rate limited", 429, fault=Fault.RATE_LIMITED))
    core = await opened.open(load_config(home=tmp_path), model=model)
    try:
        reply = await core.agent.handle("1", "hello")
        report = await core.budget.report()
    finally:
        await opened.close()
    assert "no price for model 'small': set input_price_per_million and " in reply.text
    assert "in its [[llm.fallbacks]] entry, or remove the [budget] cap" in reply.text
    assert report.today.by_model["small"].skipped == 1
