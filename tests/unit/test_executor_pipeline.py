"""The executor's pipeline is written out once, in docs/architecture.md, and that copy is the
order the code runs: a step added, removed or moved in one and not the other fails here."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from augure.approval.gate import ApprovalGate
from augure.config.settings import load_config
from augure.host.secrets import Redactor
from augure.store.audit import Audit
from augure.store.state import Store
from augure.tools.executor import Executor
from augure.tools.registry import ToolRegistry

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "docs" / "architecture.md"
SECTION = "## The executor is a list of named steps"
# Two neighbouring steps as any written-out copy of the list would spell them.
COPY = re.compile(r"\bparse\s*▶\s*validate\b")


@pytest.fixture
async def executor(tmp_path: Path) -> AsyncIterator[Executor]:
    config = load_config(home=tmp_path)
    store = await Store.open(tmp_path / "state.db")
    audit = Audit(store)
    gate = ApprovalGate(audit, timeout_seconds=1)
    yield Executor(ToolRegistry(), audit, gate, config, Redactor({}))
    await store.close()


def section() -> str:
    return HOME.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]


def documented_steps() -> list[str]:
    """The fenced list under the executor's heading, split on its arrows."""
    fenced = re.search(r"```\n(.*?)\n```", section(), re.DOTALL)
    assert fenced is not None, f"no fenced step list under {SECTION!r}"
    return [step.strip() for step in fenced.group(1).split("▶")]


async def test_the_documented_steps_are_the_order_the_executor_runs(executor: Executor) -> None:
    assert documented_steps() == list(executor.pipeline)


async def test_the_table_of_what_each_step_decides_follows_the_same_order(
    executor: Executor,
) -> None:
    explained = re.findall(r"^\| `(\w+)` \|", section(), re.MULTILINE)
    assert explained == list(executor.pipeline)


async def test_every_step_name_is_one_of_the_executors_own_methods(executor: Executor) -> None:
    """The names are the code's: a renamed step cannot keep its old name in the doc."""
    for name, step in (*executor.gates, *executor.finishing):
        assert step.__name__ in (name, f"within_{name}"), name


def test_the_pipeline_is_written_out_in_one_place() -> None:
    """Every other page or docstring links to docs/architecture.md instead of a copy that
    goes stale (three copies once lacked the `release` step)."""
    places = [*(ROOT / "docs").rglob("*.md"), *(ROOT / "augure").rglob("*.py")]
    copies = [p.relative_to(ROOT) for p in places if COPY.search(p.read_text(encoding="utf-8"))]
    assert copies == [HOME.relative_to(ROOT)]
