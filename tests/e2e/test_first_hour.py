"""The first hour (issue 15's done-when checks): `augure init`, then `augure run` with nothing
else set answers the owner and logs who it is; a bare install (no extras) starts the same way
with those tools named as not configured. Real processes against the fakes over HTTP."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import OWNER as BOT_OWNER
from tests.e2e.conftest import Bot
from tests.e2e.helpers import augure, final_reply, tool_results
from tests.e2e.test_cli_init import KEY, env_for, flags
from tests.e2e.test_files import pdf
from tests.e2e.test_lean import OPTIONAL
from tests.fakes.openai import FakeOpenAI, Reply, text, tool
from tests.fakes.telegram import FakeTelegram

OWNER = 123456789  # the id `flags` gives init

# `python -m augure` as if installed by `pip install .` alone: Python's own marker for a
# module that cannot be imported, set for every library an extra brings.
BARE_INSTALL = (
    "import runpy, sys\n"
    f"for name in {OPTIONAL!r}:\n"
    "    sys.modules[name] = None\n"
    "runpy.run_module('augure', run_name='__main__')\n"
)


async def run_until_answered(
    argv: list[str], env: dict[str, str], telegram: FakeTelegram, llm: FakeOpenAI
) -> str:
    """Start `augure run`, have the owner say hello, wait for the answer, stop: its stderr."""
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    try:
        llm.script(text("Hello, owner."))
        telegram.inject_message(OWNER, "hello")
        await telegram.wait_for("sendMessage", timeout=30)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(process.communicate(), 15)
    assert process.returncode == 0, err.decode()
    return err.decode()


def startup_line(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if "Augure 0.1.0 as @" in line]
    return line


async def test_init_then_run_with_nothing_else_set_answers_and_says_who_it_is(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.script(text("OK"))  # init's check of the model
        code, _, err = await augure(*flags(telegram, llm), env=env_for(home, telegram))
        assert code == 0, err
        # Only the home and where the (fake) Bot API is: the rest comes from what init wrote.
        stderr = await run_until_answered(
            [sys.executable, "-m", "augure", "run"], env_for(home, telegram), telegram, llm
        )
        sent = telegram.sent("sendMessage")
        token = telegram.token
    assert int(sent[-1].params["chat_id"]) == OWNER
    assert "Hello, owner." in sent[-1].params["text"]
    line = startup_line(stderr)
    assert "Augure 0.1.0 as @augure_test_bot: model test-model; " in line
    assert " tools ready; not configured: " in line
    assert "email (set [tools.email]" in line  # what to set, by name
    assert token not in stderr and KEY not in stderr


async def test_a_bare_install_starts_with_the_extras_tools_not_configured(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        llm.script(text("OK"))
        code, _, err = await augure(*flags(telegram, llm), env=env_for(home, telegram))
        assert code == 0, err
        stderr = await run_until_answered(
            [sys.executable, "-c", BARE_INSTALL, "run"], env_for(home, telegram), telegram, llm
        )
    line = startup_line(stderr)
    for name, extra in (("browser", "browser"), ("github", "github"), ("email", "email")):
        assert f"{name} (run pip install 'augure[{extra}]')" in line, line
    ready = int(line.split("; ")[1].split()[0])
    assert ready >= 5  # datetime, memory, files, http, schedule… still work


async def test_files_reads_a_sent_text_file_and_a_sent_pdf(bot: Bot) -> None:
    """Both documents go through Telegram's getFile and the bot's inbox, then `files`."""

    def respond(request: dict[str, Any]) -> Reply:
        told = str(request["messages"][-1]["content"])
        saved = re.search(r"inbox/\S+\.(txt|pdf)", told)
        if saved and request["messages"][-1]["role"] == "user":
            return tool("files", {"action": "read", "path": saved.group(0)})
        return text(f"Read it ({len(bot.llm.requests)}).")

    bot.llm.responder = respond
    bot.telegram.inject_message(BOT_OWNER, document=("list.txt", b"eggs, flour, milk"))
    await final_reply(bot, "Read it (2).")
    bot.telegram.inject_message(
        BOT_OWNER, document=("invoice.pdf", pdf("Invoice 42: total 99 EUR", "Thank you"))
    )
    await final_reply(bot, "Read it (4).")
    (text_file,) = tool_results(bot.llm, 1)
    assert "eggs, flour, milk" in text_file and "list.txt" in text_file
    pdf_file = tool_results(bot.llm, 3)[-1]
    assert "--- page 1 ---\nInvoice 42: total 99 EUR" in pdf_file, pdf_file
    assert "--- page 2 ---\nThank you" in pdf_file


def quick_start_block() -> list[str]:
    """The first shell block under the README's "## Quick start", comments dropped."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines()]


def quick_start() -> list[str]:
    """The README's quick start, as a new user would copy it: its `augure` lines."""
    return [line for line in quick_start_block() if line.startswith("augure ")]


def test_the_readme_quick_start_can_be_pasted_as_it_stands() -> None:
    """Every line runs as written in the folder of the source: no placeholder to fill in (a
    made-up URL, an `<angle bracket>` the shell would read as a redirection), and the venv is
    made and activated before the first `pip` or `augure`."""
    lines = [line for line in quick_start_block() if line]
    placeholders = re.compile(r"<[^>]*>|\bOWNER\b|\bexample\.(com|org)\b|YOUR", re.IGNORECASE)
    assert not [line for line in lines if placeholders.search(line)], lines
    assert lines[0] == "python3 -m venv .venv && . .venv/bin/activate", lines
    assert lines[1] == "pip install '.[all]'", lines


async def test_the_readme_quick_start_works_as_written(tmp_path: Path) -> None:
    """init (by the flags `docs/install.md` gives for scripts), doctor, run, the first answer:
    the same commands, in the same order, as the README's quick start."""
    assert quick_start() == ["augure init", "augure doctor", "augure run"]
    home = tmp_path / "home"
    async with FakeTelegram() as telegram, FakeOpenAI() as llm:
        env = env_for(home, telegram)
        llm.script(text("OK"))  # init's check of the model
        code, _, err = await augure(*flags(telegram, llm), env=env)
        assert code == 0, err
        llm.script(text("OK"))  # doctor's one-token check of the model
        code, out, err = await augure("doctor", env=env)
        assert code == 0, out + err
        assert "Traceback" not in out + err
        stderr = await run_until_answered(
            [sys.executable, "-m", "augure", "run"], env, telegram, llm
        )
        sent = telegram.sent("sendMessage")
    assert "Hello, owner." in sent[-1].params["text"]
    assert "Traceback" not in stderr
