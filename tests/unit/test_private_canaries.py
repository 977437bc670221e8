"""Canaries for the few private library internals Augure relies on, where no public name
exists. Each fails when a release moves the internal, instead of the feature quietly
degrading: the keep-alive wrapper falls back to the library's own backend, and `--config`
after a command or each command's help line would silently disappear.
"""

from __future__ import annotations

import argparse

import httpx
import httpx2
import pytest

from augure.cli.parser import build_parser
from augure.common.keepalive import KeptSocket, keep_client_sockets, keep_sockets


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_the_pool_still_has_the_network_backend_keepalive_wraps(library: object) -> None:
    transport = library.AsyncHTTPTransport()  # type: ignore[attr-defined]
    assert hasattr(transport, "_pool") and hasattr(transport._pool, "_network_backend")
    assert isinstance(keep_sockets(transport)._pool._network_backend, KeptSocket)
    await transport.aclose()


@pytest.mark.parametrize("library", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_a_client_still_keeps_its_transports_where_keepalive_finds_them(
    library: object,
) -> None:
    proxies = {"all://": library.AsyncHTTPTransport()}  # type: ignore[attr-defined]
    client = library.AsyncClient(mounts=proxies)  # type: ignore[attr-defined]
    keep_client_sockets(client)
    assert isinstance(client._transport._pool._network_backend, KeptSocket)
    (mounted,) = client._mounts.values()
    assert isinstance(mounted._pool._network_backend, KeptSocket)
    await client.aclose()


def test_argparse_still_lists_subcommands_where_the_cli_reads_them() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("run", help="start the bot")
    assert isinstance(commands, argparse._SubParsersAction)
    assert commands in parser._actions
    assert [(choice.dest, choice.help) for choice in commands._choices_actions] == [
        ("run", "start the bot")
    ]


def test_the_cli_built_on_those_internals_still_does_what_they_are_for() -> None:
    parser = build_parser()
    after_the_command = parser.parse_args(["status", "--config", "elsewhere.toml", "-v"])
    assert str(after_the_command.config) == "elsewhere.toml" and after_the_command.verbose
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert commands.choices["status"].description  # the line `augure --help` shows for it
