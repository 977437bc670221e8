"""SKILL.md, test.json and ids: what a skill folder may contain."""

from __future__ import annotations

import pytest

from augure.skills.generate import Request, parse_answer
from augure.skills.model import (
    SkillError,
    bump,
    check_id,
    parse_skill_md,
    parse_test_json,
    render_skill_md,
)

GOOD = """---
name: morning-news
description: >
  Headlines of the day,
  in five lines.
version: 1.2.0
trigger: cron
schedule: "0 7 * * 1-5"
timezone: Europe/Paris
tools: [web_search, datetime]
tags: news
---

# Morning news

Search, then summarise.
"""


def test_front_matter_and_body_are_parsed() -> None:
    meta = parse_skill_md(GOOD, "morning-news")
    assert meta.name == "morning-news"
    assert meta.description == "Headlines of the day, in five lines."
    assert (meta.version, meta.trigger, meta.schedule) == ("1.2.0", "cron", "0 7 * * 1-5")
    assert meta.timezone == "Europe/Paris"
    assert meta.tools == ("web_search", "datetime") and meta.tags == ("news",)
    assert meta.body.startswith("# Morning news") and "Search, then summarise." in meta.body
    # Rendering and parsing again gives the same skill (used when a repair bumps the version).
    assert parse_skill_md(render_skill_md(meta), "morning-news") == meta


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: x\n", "must start with YAML front matter"),
        ("---\nname: x\n", "no closing"),
        ("---\n[unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "mapping"),
        ("---\nname: ../x\ndescription: d\n---\n", "invalid skill id"),
        ("---\nname: other\ndescription: d\n---\n", "differs from the skill id"),
        ("---\nname: morning-news\n---\n", "description is required"),
        ("---\nname: morning-news\ndescription: d\ntrigger: hourly\n---\n", "trigger must be"),
        ("---\nname: morning-news\ndescription: d\ntrigger: cron\n---\n", "needs schedule"),
        (
            "---\nname: morning-news\ndescription: d\ntrigger: cron\nschedule: 61 * * * *\n---\n",
            "invalid cron",
        ),
        ("---\nname: morning-news\ndescription: d\nversion: v1\n---\n", "not like 1.2.0"),
        ("---\nname: morning-news\ndescription: d\ntools: {a: 1}\n---\n", "list of names"),
    ],
)
def test_bad_skill_md_is_refused_with_the_reason(text: str, problem: str) -> None:
    with pytest.raises(SkillError, match=problem):
        parse_skill_md(text, "morning-news")


@pytest.mark.parametrize("bad", ["../x", "A", "a" * 65, "a--b", "-a", "a-", "a/b", "", "a b", 7])
def test_ids_that_could_build_a_path_are_refused(bad: object) -> None:
    with pytest.raises(SkillError, match="invalid skill id"):
        check_id(bad)


def test_good_ids_pass() -> None:
    for good in ["a", "daily-digest", "x1-2y", "a" * 64]:
        assert check_id(good) == good


def test_test_json() -> None:
    test = parse_test_json('{"answers": {"datetime": "Monday"}, "expect_output_contains": ["M"]}')
    assert test.answers == {"datetime": "Monday"} and test.expect_output_contains == ("M",)
    for bad, problem in [
        ("{", "not valid JSON"),
        ("[]", "must be an object"),
        ('{"answers": {"a": 1}}', "answers must map"),
        ('{"expect_output_contains": "x"}', "list of strings"),
    ]:
        with pytest.raises(SkillError, match=problem):
            parse_test_json(bad)


def test_bump() -> None:
    assert bump("1.2.0") == "1.2.1" and bump("2") == "2.0.1" and bump("0.1.9") == "0.1.10"


def test_the_coding_models_answer_gets_the_owners_trigger_and_known_tools_only() -> None:
    answer = (
        'Here it is:\n```json\n{"skill_md": "---\\nname: tea-time\\ndescription: Tea.\\n'
        'trigger: manual\\ntools: [datetime]\\n---\\nBody", "skill_py": "print(1)", '
        '"test_json": {"answers": {}, "expect_output_contains": ["1"]}}\n```'
    )
    request = Request("tea", "cron", "0 16 * * *", ("tea",))
    draft = parse_answer(answer, request, {"datetime"})
    assert (draft.meta.trigger, draft.meta.schedule, draft.meta.tags) == (
        "cron",
        "0 16 * * *",
        ("tea",),
    )
    assert set(draft.files) == {"SKILL.md", "skill.py", "test.json"}
    with pytest.raises(SkillError, match="do not exist"):
        parse_answer(answer, request, {"memory_read"})
    no_test = answer.replace(', "test_json": {"answers": {}, "expect_output_contains": ["1"]}', "")
    with pytest.raises(SkillError, match='needs "test_json"'):
        parse_answer(no_test, request, {"datetime"})
    with pytest.raises(SkillError, match="not a JSON object"):
        parse_answer("I cannot do that.", request, {"datetime"})
