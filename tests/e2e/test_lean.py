"""A lean process: optional libraries load on first use, are extras, and no second scheduler."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from telegram.warnings import PTBUserWarning

from augure.codemode import runtime
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import delivered, tool_results
from tests.fakes.openai import FakeOpenAI, ToolCall, text, tools
from tests.fakes.telegram import FakeTelegram

# The libraries each extra brings (pyproject.toml), by their top-level module.
OPTIONAL = (
    "playwright",
    "github",
    "imapclient",
    "markdownify",
    "tavily",
    "pydantic_monty",
    "starlette",  # the dashboard's three, loaded only when it starts
    "jinja2",
    "uvicorn",
)


@functools.cache
def loaded_at_start() -> frozenset[str]:
    """What `augure run` imports before its first getUpdates, in a fresh interpreter: the
    command read as `augure run` reads it, up to the bot's start, which stops there (a fresh
    home, no token) once the core's modules are imported."""
    probe = (
        "import sys; from augure.cli.main import main; "
        "assert main(['run']) == 1; print(__import__('json').dumps(sorted(sys.modules)))"
    )
    with tempfile.TemporaryDirectory() as home:
        environment = {
            k: v for k, v in os.environ.items() if not k.startswith(("AUGURE", "TELEGRAM"))
        }
        output = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            cwd=home,
            env=environment | {"AUGURE_HOME": home},
        ).stdout
    return frozenset(json.loads(output))


def assert_loaded_later(later: set[str], reached: str) -> None:
    """A start that did get as far as `reached` (the probe's proof) loaded none of `later`."""
    loaded = loaded_at_start()
    assert reached in loaded
    assert not later & loaded, sorted(later & loaded)


def test_starting_the_bot_imports_no_optional_library() -> None:
    loaded = loaded_at_start()
    heavy = [m for m in loaded if m.split(".")[0] in OPTIONAL]
    # Only Playwright's two error classes (its `_impl._errors` module) are allowed up front.
    assert set(heavy) <= {"playwright", "playwright._impl", "playwright._impl._errors"}, heavy


def test_what_only_replies_mail_and_the_sandbox_use_is_imported_when_first_needed() -> None:
    # Start-up is mostly imports: the Markdown parser (~16 ms) is first needed by the first
    # reply, the mail header parser (~3 ms) and the IMAP and SMTP clients (~2.5 ms) by the
    # first mail read or sent, the ctypes binding of libseccomp (~3 ms) by the first
    # sandboxed command.
    first_use = {
        "markdown_it",
        "email.policy",
        "email.headerregistry",
        "imaplib",
        "smtplib",
        "ctypes",
        "augure.sandbox.libseccomp",
    }
    assert not first_use & set(loaded_at_start())


def test_the_bot_reads_its_command_line_without_the_other_commands_modules() -> None:
    # `augure run` parses its own command line only: the modules of the commands that declare
    # their own parser (the audit's, backup's tar archives, init's template and prompts, the
    # MCP survey...) load for those commands, `--help` or an unknown command.
    others = {
        "augure.cli.audit",
        "augure.cli.backup",
        "augure.cli.dashboard",
        "augure.cli.init",
        "augure.cli.jobs",
        "augure.cli.limits",
        "augure.cli.mcp",
        "augure.cli.probes",
        "augure.cli.recall",
        "augure.cli.skills",
        "augure.cli.tasks",
        "augure.cli.usage",
        "augure.config.template",
        "augure.mcp.survey",
        "tarfile",
        "getpass",
    }
    assert_loaded_later(others, "augure.core.app")


def test_what_only_a_tools_call_uses_is_imported_at_its_first_call() -> None:
    # A bot declares every tool at start (its schema, description and settings); what runs
    # the tool loads at its first call (docs/performance.md): the browser's actions, guard
    # proxy (and socksio) and pool, the http request and the readable text of pages and PDFs,
    # the calendar's events and CalDAV round trips, code mode's runtime.
    first_call = {
        "augure.tools.browser.actions",
        "augure.tools.browser.proxy",
        "augure.tools.browser.upstream",
        "augure.tools.browser.session",
        "socksio",
        "augure.tools.http.request",
        "augure.tools.http.render",
        "augure.tools.page_text",
        "augure.tools.pdf_text",
        "augure.tools.office_text",
        "augure.tools.readable",
        "augure.tools.calendar.events",
        "augure.tools.calendar.server",
        "augure.codemode.runtime",
    }
    assert_loaded_later(first_call, "augure.core.toolset")


def test_mcp_the_skill_installer_and_did_you_mean_are_imported_when_first_needed() -> None:
    # Without `[mcp]` servers the MCP client is never used; the hub installer (its downloads,
    # their SSRF guard, the scan of what they bring) runs only when a skill is installed or
    # updated, a skill's runner at its first run or test; the closest-key suggestions only in
    # a config's error.
    later = {
        "augure.mcp.client",
        "augure.mcp.stdio",
        "augure.mcp.adapter",
        "augure.skills.install",
        "augure.skills.hub",
        "augure.skills.scan",
        "augure.skills.runner",
        "augure.tools.netguard",
        "difflib",
    }
    assert_loaded_later(later, "augure.skills.service")


def test_the_sandbox_backends_are_imported_at_the_first_sandboxed_command() -> None:
    # A start only asks whether the sandbox could run (to mark `sandbox_exec` and `opencode`
    # not configured); the backends load with the first sandboxed command or `augure doctor`.
    later = {
        "augure.sandbox.base",
        "augure.sandbox.bwrap",
        "augure.sandbox.docker",
        "augure.sandbox.seccomp",
        "augure.sandbox.slirp",
    }
    assert_loaded_later(later, "augure.tools.sandbox_exec")


def test_speech_is_imported_at_the_first_spoken_reply() -> None:
    # Only an owner who turned on `[voice] replies` ever has an answer spoken (docs/voice.md).
    assert_loaded_later({"augure.llm.speech"}, "augure.core.door.chat")


def test_the_config_needs_no_settings_library_and_the_skills_no_yaml_parser() -> None:
    # `AUGURE__` variables are laid over the config by augure/config/variables.py (the
    # settings library cost ~1.4 MB and ~11 ms); SKILL.md front matter is parsed only when a
    # skill is installed or its file changed, the catalog being kept in state.db.
    assert_loaded_later({"pydantic_settings", "yaml"}, "augure.skills.store")


def test_augure_run_alone_needs_no_argument_parser() -> None:
    # How the image and a service start the bot: argparse and gettext are ~0.35 MB.
    assert_loaded_later({"argparse", "gettext"}, "augure.core.app")


def test_telegram_passport_crypto_is_not_loaded_and_the_github_tool_still_has_it() -> None:
    pytest.importorskip("cryptography", reason="cryptography (the github extra) not installed")
    pytest.importorskip("jwt", reason="PyJWT (the github extra) not installed")
    # python-telegram-bot loads it (~8 MB) only for Telegram Passport, which Augure never uses.
    assert "cryptography" not in loaded_at_start()
    probe = "import augure.channels.telegram.bot, jwt.algorithms; print(jwt.algorithms.has_crypto)"
    later = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert later.strip() == "True"  # GitHub App tokens are signed with it


def test_telegrams_own_job_queue_scheduler_is_not_loaded() -> None:
    # python-telegram-bot builds an APScheduler JobQueue whenever APScheduler is installed
    # (~12 ms of start-up); Augure turns it off (`job_queue(None)`) and runs its own scheduler,
    # which needs only APScheduler's cron triggers.
    loaded = set(loaded_at_start())
    assert "apscheduler.schedulers" not in loaded and "apscheduler.triggers.cron" in loaded


def test_httpx_command_line_is_not_loaded() -> None:
    pytest.importorskip("click", reason="click not installed: nothing to keep out")
    # httpx imports its command line (click, rich, pygments) whenever they are installed.
    assert not {"click", "rich", "pygments"} & set(loaded_at_start())


def test_the_command_spares_the_collector_its_imports_and_leaves_it_on() -> None:
    # `augure` (and `python -m augure`) imports with the cyclic collector paused, then sets
    # what the imports made aside (gc.freeze): ~40 ms of ~150 collections at every start.
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 50_000))\n"
        "sys.argv = ['augure', '--version']\n"
        "from augure.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["True", "True"]


def test_the_openai_client_is_built_without_aiohttp() -> None:
    pytest.importorskip("aiohttp", reason="aiohttp not installed: nothing to keep out")
    # The SDK loads it (~7 MB) only for an alternative HTTP client, which Augure never uses.
    probe = (
        "import sys; from augure.config.llm import LLMConfig; "
        "from augure.llm.client import LLM; "
        "LLM(LLMConfig(base_url='http://127.0.0.1:9/v1')).client; "
        "print('aiohttp' in sys.modules, end=' '); import aiohttp; print('importable')"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "False importable"


async def test_a_tool_without_its_extra_is_listed_with_the_command_and_refuses_calls(
    tmp_path: Path,
    telegram: FakeTelegram,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A None entry in sys.modules is how Python itself marks a module as not importable.
    for module in ("playwright", "imapclient"):
        monkeypatch.setitem(sys.modules, module, None)
    llm.script(
        tools(ToolCall("load_tools", {"names": ["email"]})),  # deferred: its schema on demand
        tools(ToolCall("browser", {"action": "open", "url": "https://example.com/"})),
        tools(ToolCall("email", {"action": "list"})),
        text("Done."),
    )
    bot = await Bot(tmp_path / "home", telegram, llm, monkeypatch).start()
    try:
        telegram.inject_message(OWNER, "browse, then check my mail")
        await delivered(telegram, "Done.")
    finally:
        await bot.stop()
    schemas = {s["function"]["name"]: s["function"] for s in llm.requests[1]["tools"]}
    assert schemas["email"]["description"].endswith(
        "[NOT CONFIGURED] run pip install 'augure[email]'"
    )
    assert "action" in schemas["email"]["parameters"]["properties"]  # still fully described
    browsed = tool_results(llm, 2)[-1]
    assert "Error: browser is not installed: run pip install 'augure[browser]'" in browsed
    mailed = tool_results(llm, 3)[-1]
    assert "Error: email is not installed: run pip install 'augure[email]'" in mailed


async def test_a_snippet_without_the_code_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_monty", None)
    outcome = await runtime.run("1 + 1", {}, runtime.RunLimits(timeout_seconds=5, max_calls=1))
    assert outcome.error == "code mode needs pydantic-monty: run pip install 'augure[code]'"


async def test_the_bot_starts_no_scheduler_of_python_telegram_bot(bot: Bot) -> None:
    # Jobs run on Augure's own scheduler; PTB would otherwise start an APScheduler of its own.
    assert bot.channel is not None
    with pytest.warns(PTBUserWarning, match="No `JobQueue` set up"):
        assert bot.channel.application.job_queue is None


async def test_a_quick_answer_is_one_bot_api_call_and_a_slow_one_shows_typing(bot: Bot) -> None:
    bot.llm.script(text("Quick."), text("Slow.", delay=1.5))
    bot.telegram.inject_message(OWNER, "quick?")
    await delivered(bot.telegram, "Quick.")
    await bot.telegram.wait_idle(quiet=0.5)
    quick = [c.method for c in bot.telegram.calls if c.method != "getUpdates"]
    assert quick.count("sendChatAction") == 0 and quick.count("sendMessage") == 1
    bot.telegram.inject_message(OWNER, "slow?")
    await delivered(bot.telegram, "Slow.")
    typing = bot.telegram.sent("sendChatAction")
    assert [c.params["action"] for c in typing] == ["typing"]


async def test_a_message_waiting_behind_a_turn_of_its_chat_shows_no_typing_of_its_own(
    bot: Bot,
) -> None:
    # The first turn's indicator already covers the chat; the one queued behind it used to
    # start its own indicator while waiting, a Bot API call per queued message.
    bot.llm.script(text("Slow.", delay=1.5), text("Quick."))
    bot.telegram.inject_message(OWNER, "slow?")
    await bot.llm.wait_requests(1)
    bot.telegram.inject_message(OWNER, "and quick?")
    await delivered(bot.telegram, "Quick.")
    await bot.telegram.wait_idle(quiet=0.5)
    typing = bot.telegram.sent("sendChatAction")
    assert [c.params["action"] for c in typing] == ["typing"]
