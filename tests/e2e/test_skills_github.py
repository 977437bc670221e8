"""Skills from a GitHub hub through the real bot (install_skill asks, showing the commit) and
through `augure skills install|update` as a real process, against the fake GitHub API."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import (
    approval_message,
    augure,
    buttons,
    delivered,
    environment,
    is_clock,
    tool_results,
)
from tests.fakes.github import FakeGitHub
from tests.fakes.openai import text, tool
from tests.fakes.skills_repo import (
    EXTRACT_PY,
    FORMS_MD,
    HUB,
    LAYOUT,
    REPO,
    hub_env,
    published,
)


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with published() as server:
        yield server


@pytest.fixture
def bot_env(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    return hub_env(github)


async def test_install_skill_asks_showing_the_commit_and_an_update_asks_again(
    bot: Bot, github: FakeGitHub
) -> None:
    assert bot.core is not None
    bot.llm.script(tool("install_skill", {"skill_id": "sneaky"}), text("Refused."))
    bot.telegram.inject_message(OWNER, "install sneaky")
    await delivered(bot.telegram, "Refused.")
    assert "the static scan failed" in tool_results(bot.llm)[-1]
    assert not any("reply_markup" in c.params for c in bot.telegram.sent("sendMessage"))

    first = github.git[REPO].refs["heads/main"]
    bot.llm.script(tool("install_skill", {"skill_id": "pdf-tools"}), text("Installed."))
    bot.telegram.inject_message(OWNER, "install pdf-tools")
    message = await approval_message(bot)
    shown = message["text"]
    for fragment in [f'"commit": "{first}"', f'"hub": "{HUB}"', '"scripts/extract.py"',
                     '"not_mapped": [', '"scan": "clean"']:  # fmt: skip
        assert fragment in shown
    # "Always allow" names the commit: it never covers another commit of the same version.
    assert f"Always allow would save: install_skill:pdf-tools@{first}" in shown
    assert not (bot.home / "skills" / "pdf-tools").exists()
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await delivered(bot.telegram, "Installed.")
    assert tool_results(bot.llm)[-1].startswith(
        f"Installed skill pdf-tools 0.1.0 at commit {first}"
    )

    # Its turn reads the skill's other files; the script runs only through sandbox_exec,
    # which asks like any sandbox run (refused here, so it never runs).
    command = "python3 scripts/extract.py form.pdf"
    bot.llm.script(
        tool("run_skill", {"id": "pdf-tools"}),
        tool("sandbox_exec", {"command": command}),
        text("The script was not run."),
        text("Done."),
    )
    bot.telegram.inject_message(OWNER, "fill the form")
    asked = await approval_message(bot, count=2)
    assert "Tool: sandbox_exec" in asked["text"] and command in asked["text"]
    bot.telegram.press_button(OWNER, asked["message_id"], buttons(asked)["Reject"])
    await delivered(bot.telegram, "Done.")
    skill_turn = [m for m in bot.llm.requests[-2]["messages"] if not is_clock(m)]
    prompt = next(m["content"] for m in skill_turn if m["role"] == "user")
    assert FORMS_MD in prompt and EXTRACT_PY in prompt
    offered = {t["function"]["name"] for t in bot.llm.requests[-2]["tools"]}
    assert "sandbox_exec" in offered and "http" not in offered

    second = github.commit(
        REPO, {**LAYOUT, "skills/pdf-tools/references/forms.md": FORMS_MD + "Dates: ISO.\n"}
    )
    bot.llm.script(tool("install_skill", {"skill_id": "pdf-tools"}), text("Updated."))
    bot.telegram.inject_message(OWNER, "update pdf-tools")
    message = await approval_message(bot, count=3)
    assert f'"commit": "{second}"' in message["text"]
    assert '"changed": [' in message["text"] and "Dates: ISO." in message["text"]
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await delivered(bot.telegram, "Updated.")
    assert tool_results(bot.llm)[-1] == f"Updated skill pdf-tools to commit {second} (active)."
    record = await bot.core.skills.files.record("pdf-tools")
    assert record is not None and record.revision == second


async def at_terminal(*args: str, env: dict[str, str], answer: str) -> tuple[int, str]:
    """`augure ARGS` with its stdin a terminal (so it asks y/N) answered with `answer`."""
    controller, terminal = pty.openpty()
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "augure", *args, env=env, stdin=terminal,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        os.write(controller, answer.encode())
        out, _ = await asyncio.wait_for(process.communicate(), 60)
    finally:
        os.close(terminal)
        os.close(controller)
    assert process.returncode is not None
    return process.returncode, out.decode()


async def test_cli_installs_by_id_and_update_offers_a_newer_commit(
    tmp_path: Path, github: FakeGitHub
) -> None:
    extra = {"AUGURE__SKILLS__HUBS": json.dumps([HUB]),
             "AUGURE__TOOLS__GITHUB__BASE_URL": github.base_url}  # fmt: skip
    env = environment(tmp_path, extra)
    env.pop("GITHUB_TOKEN", None)
    code, _, err = await augure("skills", "install", "sneaky", env=env)
    assert code == 1 and "the static scan failed" in err and len(err.splitlines()) == 1
    code, _, err = await augure("skills", "install", "pdf-tools", "--hub", "someone/else", env=env)
    assert (
        code == 1
        and err.strip() == f"augure: no hub named 'someone/else'; the hubs are: {REPO}/skills"
    )
    # From a script nobody can approve: rejected, nothing written.
    code, _, err = await augure("skills", "install", "pdf-tools", env=env)
    assert code == 1 and "Tool call rejected by user." in err
    assert not (tmp_path / "skills" / "pdf-tools").exists()

    first = github.git[REPO].refs["heads/main"]
    code, out = await at_terminal(
        "skills", "install", "pdf-tools", "--hub", f"{REPO}/skills", env=env, answer="y\n"
    )
    assert code == 0, out
    assert f'"commit": "{first}"' in out and "scripts/extract.py" in out
    assert f"Installed skill pdf-tools 0.1.0 at commit {first} (active)" in out
    code, out, _ = await augure("skills", "show", "pdf-tools", env=env)
    assert f"hub: {HUB}" in out and f"commit: {first}" in out

    asked_before = len(github.requests)
    code, out, _ = await augure("skills", "update", env=env)
    assert code == 0 and out.startswith(
        f"pdf-tools: up to date (skill pdf-tools is installed at commit {first}"
    )
    # The hub is still at that commit: its tree and files are not fetched again.
    fetched = [r.path for r in github.requests[asked_before:]]
    assert not [path for path in fetched if "/git/trees/" in path or "/git/blobs/" in path]
    second = github.commit(
        REPO, {**LAYOUT, "skills/pdf-tools/references/forms.md": FORMS_MD + "Dates: ISO.\n"}
    )
    code, out, _ = await augure("skills", "update", env=env)  # nobody to ask: offered, refused
    assert code == 1 and out.startswith("pdf-tools: Tool call rejected by user.")
    code, out = await at_terminal("skills", "update", "pdf-tools", env=env, answer="y\n")
    assert code == 0, out
    assert f'"commit": "{second}"' in out and '"changed": [' in out
    assert f"pdf-tools: Updated skill pdf-tools to commit {second} (active)." in out
    code, out, _ = await augure("skills", "show", "pdf-tools", env=env)
    assert f"commit: {second}" in out
