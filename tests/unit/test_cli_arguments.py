"""`augure run` alone is read without argparse; what it reads is what the parser would."""

from __future__ import annotations

import pytest

from augure.cli.main import RUN, _arguments
from augure.cli.parser import build_parser, command_named


def test_augure_run_alone_reads_as_the_parser_reads_it() -> None:
    assert vars(_arguments(["run"])) == vars(build_parser("run").parse_args(["run"])) == RUN


@pytest.mark.parametrize(
    "argv",
    [["run", "-v"], ["--config", "other.toml", "run"], ["run", "--config", "x.toml"], ["chat"]],
)
def test_anything_else_goes_through_the_parser(argv: list[str]) -> None:
    assert vars(_arguments(argv)) == vars(build_parser(command_named(argv)).parse_args(argv))
