"""Skills written by the coding model: the request, its answer, and what makes an answer usable."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from augure.config.llm import LLMConfig, LLMOverrides, Roles
from augure.config.settings import Config
from augure.llm.client import LLM
from augure.llm.faults import LLMError
from augure.llm.models import Entry, Models
from augure.llm.spend import SKILL_GENERATION, SpendGate, coding_priced, working_as
from augure.skills.model import (
    SKILL_MD,
    SKILL_PY,
    TEST_JSON,
    SkillError,
    SkillMeta,
    parse_skill_md,
    parse_test_json,
    render_skill_md,
)

INSTRUCTIONS = """\
You write skills for Augure, a personal assistant. A skill is a folder of files:

- SKILL.md: YAML front matter between '---' lines with `name` (the skill id: lowercase words \
joined by hyphens, at most 64 characters), `description` (one line: what it does and when to \
use it), `version` ("0.1.0"), `trigger` ("manual" or "cron"), `schedule` (5-field cron, only \
for cron), `tools` (the list of tools its code calls) and `tags`; then a markdown body of \
instructions.
- skill.py (when the task can be done by code): Python run in a sandboxed subset (no files, \
network or imports except json, re, math, datetime, collections, itertools). It calls tools \
as plain functions of the `api` module, e.g. `api.memory_read(path="todo.md")`, each returning \
text and raising ToolError when it fails. It may call ONLY the tools listed in `tools`. What it \
prints is the skill's output, delivered to the owner.
- test.json (required with skill.py): {"answers": {"<tool>": "<canned result text>"}, \
"expect_output_contains": ["<text the output must contain>"]}: the code is run with each tool \
answering its canned text, and the output must contain every expected string.

Answer with ONE JSON object and nothing else: {"skill_md": "...", "skill_py": "..." or null, \
"test_json": {...} or null}.

The tools the code may call:
"""


@dataclass(frozen=True)
class Request:
    description: str
    trigger: str
    schedule: str | None
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Draft:
    meta: SkillMeta
    files: dict[str, bytes]


def coding_llm(config: Config, gate: SpendGate | None) -> Models | None:
    """The model for `[llm.coding]` when it overrides anything, behind the same budget gate;
    None means: use the main one. Priced by `[llm.coding]`, else by the same model's entry."""
    overrides = config.llm.coding.model_dump(
        exclude_none=True, include=set(LLMOverrides.model_fields)
    )
    if not overrides:
        return None
    merged: LLMConfig = config.llm.model_copy(update=overrides | {"fallbacks": []})
    priced = coding_priced(config)
    entry = Entry(merged.model, LLM(merged), priced.prices, setting=priced.setting)
    return Models([entry], Roles(), gate)


def first_messages(request: Request, tool_stubs: Sequence[str]) -> list[dict[str, Any]]:
    schedule = f", schedule {request.schedule!r}" if request.schedule else ""
    tags = f", tags {list(request.tags)}" if request.tags else ""
    return [
        {"role": "system", "content": INSTRUCTIONS + "\n".join(tool_stubs)},
        {
            "role": "user",
            "content": f"Write a skill (trigger {request.trigger}{schedule}{tags}) that does "
            f"this:\n\n{request.description}",
        },
    ]


async def ask(llm: Models, messages: list[dict[str, Any]]) -> str:
    """One answer of the coding model, appended to `messages`. SkillError if it fails."""
    try:
        with working_as(SKILL_GENERATION):
            response = await llm.complete(messages)
    except LLMError as exc:
        raise SkillError(f"the coding model failed: {exc}") from None
    answer = response.content or ""
    messages.append({"role": "assistant", "content": answer})
    return answer


def parse_answer(
    answer: str, request: Request, known_tools: Collection[str], keep_id: str | None = None
) -> Draft:
    """The skill in the coding model's answer, with the owner's trigger, schedule and tags."""
    data = _json_object(answer)
    skill_md = data.get("skill_md")
    if not isinstance(skill_md, str):
        raise SkillError('the answer has no "skill_md" text')
    meta = parse_skill_md(skill_md)
    if keep_id is not None and meta.name != keep_id:
        meta = replace(meta, name=keep_id)
    # The owner asked for this trigger and schedule: they win over what the model wrote.
    meta = replace(
        meta,
        trigger="cron" if request.trigger == "cron" else "manual",
        schedule=request.schedule if request.trigger == "cron" else None,
        tags=request.tags or meta.tags,
    )
    meta = parse_skill_md(render_skill_md(meta), meta.name)  # validates the schedule
    unknown = [t for t in meta.tools if t not in known_tools]
    if unknown:
        raise SkillError(
            f"tools {', '.join(unknown)} do not exist; use only: {', '.join(sorted(known_tools))}"
        )
    files = {SKILL_MD: render_skill_md(meta).encode()}
    code = data.get("skill_py")
    if code is not None:
        if not isinstance(code, str) or not code.strip():
            raise SkillError('"skill_py" must be Python source text or null')
        test = data.get("test_json")
        if isinstance(test, dict):
            test = json.dumps(test, ensure_ascii=False, indent=2)
        if not isinstance(test, str):
            raise SkillError('a code skill needs "test_json" with answers and expected output')
        parse_test_json(test)
        files[SKILL_PY] = code.encode()
        files[TEST_JSON] = test.encode()
    return Draft(meta, files)


def retry_message(problem: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": f"That did not work: {problem}\n\nFix it and answer again with the whole "
        "JSON object (skill_md, skill_py, test_json), nothing else.",
    }


def repair_messages(
    files: dict[str, bytes], failure: str, tool_stubs: Sequence[str]
) -> list[dict[str, Any]]:
    shown = {
        "skill_md": files.get(SKILL_MD, b"").decode(),
        "skill_py": files[SKILL_PY].decode() if SKILL_PY in files else None,
        "test_json": files[TEST_JSON].decode() if TEST_JSON in files else None,
    }
    return [
        {"role": "system", "content": INSTRUCTIONS + "\n".join(tool_stubs)},
        {
            "role": "user",
            "content": "This skill failed when it ran for real:\n"
            f"{failure}\n\nIts files:\n{json.dumps(shown, ensure_ascii=False, indent=2)}\n\n"
            "Fix it, keep its name, and answer with the whole JSON object, nothing else.",
        },
    ]


def _json_object(answer: str) -> dict[str, Any]:
    text = answer.strip()
    fenced = re.search(r"```(?:json)?\s*\n(.*?)\n```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise SkillError("the answer is not a JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise SkillError(f"the answer is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise SkillError("the answer is not a JSON object")
    return data
