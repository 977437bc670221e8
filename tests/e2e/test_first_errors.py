"""The errors a new user meets first: each is one line that names its fix (README,
"Commands"; docs/reference/configuration.md)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from augure import __version__
from augure.config.template import render
from tests.e2e.helpers import augure, environment

ROOT = Path(__file__).resolve().parents[2]


def one_line(err: str) -> str:
    assert "Traceback" not in err, err
    assert err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize(
    "words",
    [
        ("--config", "{file}", "tools", "list"),
        ("tools", "list", "--config", "{file}"),
        ("run", "--config", "{file}"),
        ("jobs", "list", "--config", "{file}"),
    ],
    ids=["before the command", "after tools list", "after run", "after jobs list"],
)
async def test_config_option_works_before_or_after_any_command(
    tmp_path: Path, words: tuple[str, ...]
) -> None:
    # A file outside the home, with a value only it holds: the error proves it was read.
    chosen = tmp_path / "elsewhere" / "mine.toml"
    chosen.parent.mkdir()
    chosen.write_text("[agent]\nmax_loops = 'lots'\n")
    argv = [word.format(file=chosen) for word in words]
    code, _, err = await augure(*argv, env=environment(tmp_path / "home"))
    assert code == 1
    line = one_line(err)
    assert "agent.max_loops" in line and str(chosen) in line, line


@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        (
            "AUGURE__AGNT__MAX_LOOPS",
            "unknown setting AUGURE__AGNT__MAX_LOOPS "
            "(section 'agnt'; did you mean AUGURE__AGENT__MAX_LOOPS?)",
        ),
        (
            "AUGURE__AGENT__MAX_LOOP",
            "unknown setting AUGURE__AGENT__MAX_LOOP "
            "(key 'max_loop' in [agent]; did you mean AUGURE__AGENT__MAX_LOOPS?)",
        ),
        (
            "AUGURE__LLM__CODNG__MODEL",
            "unknown setting AUGURE__LLM__CODNG__MODEL "
            "(key 'codng' in [llm]; did you mean AUGURE__LLM__CODING__MODEL?)",
        ),
        (
            "AUGURE__TOOLS__HTTP__TIMEOUT",
            "unknown setting AUGURE__TOOLS__HTTP__TIMEOUT "
            "(key 'timeout' in [tools.http]; did you mean AUGURE__TOOLS__HTTP__TIMEOUT_SECONDS?)",
        ),
    ],
    ids=["unknown section", "unknown key", "unknown table", "unknown tool key"],
)
async def test_unknown_section_variable_is_refused_naming_the_nearest(
    tmp_path: Path, variable: str, expected: str
) -> None:
    code, _, err = await augure("tools", "list", env=environment(tmp_path, {variable: "3"}))
    assert code == 1
    assert one_line(err) == f"augure: config error: {expected}"


@pytest.mark.parametrize(
    "command", [("doctor",), ("tools", "list", "--json")], ids=["doctor", "tools list"]
)
def test_a_closed_pipe_ends_quietly(tmp_path: Path, command: tuple[str, ...]) -> None:
    # `augure doctor | head -1` once head has gone: every write meets a reader-less pipe.
    reader, writer = os.pipe()
    os.close(reader)
    unreachable = {"OPENAI_BASE_URL": "http://127.0.0.1:9", "AUGURE__LLM__MAX_RETRIES": "0"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "augure", *command],
            env=environment(tmp_path, unreachable),
            stdout=writer,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)
    err = done.stderr.decode()
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err
    # What a shell reports for a writer cut off by a closed pipe: 128 + SIGPIPE.
    assert done.returncode == 141, (done.returncode, err)


def test_every_placeholder_line_of_the_template_is_valid_toml() -> None:
    commented = re.compile(r"^# ([a-z_]+ = .*)$")
    invalid = []
    for line in render().splitlines():
        if (match := commented.match(line)) is None:
            continue
        try:
            tomllib.loads(match.group(1))
        except tomllib.TOMLDecodeError:
            invalid.append(line)
    assert not invalid, invalid


def _short_commit() -> str:
    git = ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]
    return subprocess.run(git, capture_output=True, text=True, check=True).stdout.strip()


async def test_version_names_the_commit_in_a_git_checkout(tmp_path: Path) -> None:
    code, out, _ = await augure("--version", env=environment(tmp_path))
    assert code == 0 and out.strip() == f"augure {__version__} (git {_short_commit()})"


def test_version_outside_git_is_the_version_alone(tmp_path: Path) -> None:
    copy = tmp_path / "installed"
    shutil.copytree(ROOT / "augure", copy / "augure")
    env = environment(tmp_path / "home", {"PYTHONPATH": str(copy)})
    process = subprocess.run(
        [sys.executable, "-m", "augure", "--version"],
        env=env,
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert process.returncode == 0 and process.stdout.strip() == f"augure {__version__}"
    assert process.stderr == ""


async def test_version_without_git_installed_is_the_version_alone(tmp_path: Path) -> None:
    no_git = environment(tmp_path, {"PATH": str(tmp_path / "empty-bin")})
    code, out, err = await augure("--version", env=no_git)
    assert code == 0 and out.strip() == f"augure {__version__}" and err == ""


@pytest.mark.parametrize(
    "command",
    [
        ("chat",),
        ("tools", "list"),
        ("init", "--non-interactive"),
        ("backup",),
        ("jobs", "list"),
        ("rules",),
        ("status",),
        ("memory", "list"),
    ],
    ids=lambda words: " ".join(words),
)
async def test_an_unusable_home_is_one_line_naming_augure_home(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # A folder cannot be made under a regular file, whoever asks: root included.
    (tmp_path / "file.txt").write_text("not a folder")
    home = tmp_path / "file.txt" / "home"
    code, _, err = await augure(*command, env=environment(home), stdin="")
    assert code == 1
    line = one_line(err)
    assert "AUGURE_HOME" in line and str(home) in line, line
    assert "the environment variable AUGURE_HOME" in line, line
    assert "database" not in line.lower(), line


@pytest.mark.system_package("util-linux")
@pytest.mark.parametrize(
    "command", [("jobs", "list"), ("rules",), ("tools", "list")], ids=lambda w: " ".join(w)
)
def test_a_read_only_home_is_not_told_as_a_damaged_database(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # A home that exists but refuses writes, even to root: a read-only bind mount of it, in a
    # mount namespace of this test's own.
    home = tmp_path / "home"
    home.mkdir()
    augure_argv = " ".join([shlex.quote(sys.executable), "-m", "augure", *command])
    script = f"mount --bind {home} {home} && mount -o remount,bind,ro {home} && exec {augure_argv}"
    done = subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c", script],
        env=environment(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith(f"augure: AUGURE_HOME {home} ") and "Read-only" in line, line
    assert "state.db" not in line, line


async def test_a_home_that_is_a_file_is_one_line_naming_augure_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    code, _, err = await augure("rules", env=environment(home))
    assert code == 1
    line = one_line(err)
    assert "AUGURE_HOME" in line and str(home) in line and "database" not in line.lower()


async def test_doctor_reports_an_unusable_home_as_a_check(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("not a folder")
    home = tmp_path / "file.txt" / "home"
    unreachable = {"OPENAI_BASE_URL": "http://127.0.0.1:9", "AUGURE__LLM__MAX_RETRIES": "0"}
    code, out, err = await augure("doctor", env=environment(home, unreachable), timeout=120)
    assert code == 1 and "Traceback" not in err
    (home_line,) = [line for line in out.splitlines() if line.startswith("FAIL  home:")]
    assert "AUGURE_HOME" in home_line and str(home) in home_line


async def test_doctor_reports_a_writable_home_as_ok(tmp_path: Path) -> None:
    unreachable = {"OPENAI_BASE_URL": "http://127.0.0.1:9", "AUGURE__LLM__MAX_RETRIES": "0"}
    _, out, _ = await augure("doctor", env=environment(tmp_path, unreachable), timeout=120)
    assert [line for line in out.splitlines() if line.startswith("ok    home:")], out


async def test_chat_with_nothing_set_up_names_the_endpoint_and_augure_init(
    tmp_path: Path,
) -> None:
    """No key and no endpoint: the answer names where it tried and the command that sets a
    model up, and does not ask the user to try the same thing again."""
    code, out, _ = await augure("chat", env=environment(tmp_path), stdin="hello\n", timeout=60)
    assert code == 0
    assert "https://api.openai.com/v1" in out, out
    assert "augure init" in out, out
    assert "try again" not in out.lower(), out
