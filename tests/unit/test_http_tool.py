"""The `http` tool against real loopback servers, with real httpx and the real SSRF guard."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from augure.approval.rules import matches
from augure.config.settings import load_config
from augure.config.tools import ToolsConfig
from augure.memory.store import MemoryStore
from augure.store.state import Store
from augure.tools.base import Egress, RunContext, ToolResult
from augure.tools.http import HttpSettings, Preset, http_tool, rule, target
from augure.tools.http.request import request
from augure.tools.netguard import BlockedURL, Pinned, check_url, pin_url
from tests.fakes.search import FakeUpstream

TOKEN = "lab-token-5f3a9c"  # a secret value: must reach the server and nothing else
LOCAL = HttpSettings(allow_private_networks=True)


@pytest.fixture
async def upstream() -> AsyncIterator[FakeUpstream]:
    async with FakeUpstream() as server:
        yield server


def lab(upstream: FakeUpstream, **settings: Any) -> HttpSettings:
    preset = Preset(
        base_url=f"{upstream.root}/api/v2",
        headers={"Authorization": "Bearer ${TEST_LAB_TOKEN}", "Accept": "application/json"},
    )
    return HttpSettings(allow_private_networks=True, presets={"lab": preset}, **settings)


async def test_get_returns_status_headers_and_pretty_json(upstream: FakeUpstream) -> None:
    result = await request("GET", f"{upstream.root}/data?x=1", settings=LOCAL)
    assert result.success
    lines = result.output.splitlines()
    assert lines[0] == "HTTP 200 OK"
    assert lines[1].startswith("content-type: application/json")
    assert '"hello": "world"' in result.output and '"path": "/data?x=1"' in result.output
    assert '\n "list": [\n  1,\n  2\n ]' in result.output  # indented, one space a level


async def test_post_sends_json_objects_as_json_and_strings_as_is(upstream: FakeUpstream) -> None:
    result = await request("POST", f"{upstream.root}/echo", settings=LOCAL, body={"a": [1, "é"]})
    method, _, headers, body = upstream.requests[-1]
    assert method == "POST" and headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"a": [1, "é"]}
    assert result.success and '"method": "POST"' in result.output

    await request(
        "PUT",
        f"{upstream.root}/echo",
        settings=LOCAL,
        body="plain words",
        headers={"Content-Type": "text/plain", "X-Trace": "t1"},
    )
    method, _, headers, body = upstream.requests[-1]
    assert (method, body, headers["X-Trace"]) == ("PUT", b"plain words", "t1")


async def test_error_status_binary_body_and_unreachable_host_are_results(
    upstream: FakeUpstream,
) -> None:
    missing = await request("GET", f"{upstream.root}/missing", settings=LOCAL)
    assert not missing.success and missing.output.startswith("Error: HTTP 404 Not Found")
    assert '"message": "Not Found"' in missing.output

    png = await request("GET", f"{upstream.root}/png", settings=LOCAL)
    assert "[binary body: 16 bytes of image/png, not shown]" in png.output
    assert "PNG" not in png.output

    closed = f"http://127.0.0.1:{_free_port()}/"
    refused = await request("GET", closed, settings=LOCAL)
    assert not refused.success and refused.output.startswith(f"Error: GET {closed} failed")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_response_is_cut_at_the_cap_even_when_endless(upstream: FakeUpstream) -> None:
    small = HttpSettings(allow_private_networks=True, max_response_bytes=1000)
    big = await request("GET", f"{upstream.root}/big", settings=small)
    assert big.output.endswith("\n" + "x" * 1000 + "\n[response cut at 1000 bytes]")

    started = time.monotonic()
    endless = await request("GET", f"{upstream.root}/endless", settings=small)
    assert endless.output.endswith("y" * 1000 + "\n[response cut at 1000 bytes]")
    assert time.monotonic() - started < 5

    roomy = HttpSettings(allow_private_networks=True, max_response_bytes=400_000)
    whole = await request("GET", f"{upstream.root}/big", settings=roomy)
    assert whole.output.endswith("\n\n" + "x" * 300_000)  # under the cap: whole, no marker


async def test_timeout_is_an_error_result_on_time(upstream: FakeUpstream) -> None:
    started = time.monotonic()
    result = await request(
        "GET",
        f"{upstream.root}/slow",
        settings=HttpSettings(allow_private_networks=True, timeout_seconds=0.5),
    )
    assert time.monotonic() - started < 3
    assert not result.success
    assert result.output == f"Error: no complete response from {upstream.root}/slow within 0.5 s"


# -- SSRF ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "localhost", "169.254.169.254", "[::1]", "0x7f000001", "10.0.0.7"],
)
async def test_private_and_metadata_addresses_are_refused_by_default(
    upstream: FakeUpstream, host: str
) -> None:
    port = upstream.root.rsplit(":", 1)[1]
    result = await request(
        "GET", f"http://{host}:{port}/latest/meta-data/", settings=HttpSettings()
    )
    assert not result.success
    assert "refused" in result.output and "allow_private_networks" in result.output
    assert upstream.requests == []


async def test_other_schemes_and_credentials_in_urls_are_refused() -> None:
    for url in ("file:///etc/passwd", "ftp://example.com/x", "http://user:pw@example.com/"):
        result = await request("GET", url, settings=LOCAL)
        assert not result.success and "Error: refused" in result.output, url


async def test_every_redirect_hop_passes_the_real_check(upstream: FakeUpstream) -> None:
    """The first server stands in for a public host; the hop it redirects to is checked for real."""
    port = upstream.root.rsplit(":", 1)[1]
    checked: list[str] = []

    async def public_first_hop(url: str) -> str:
        checked.append(url)
        if len(checked) == 1:
            return url
        return await check_url(url, allow_private=False)

    for inside in (
        f"http://127.0.0.1:{port}/admin",
        f"http://localhost:{port}/admin",
        "http://169.254.169.254/latest/meta-data/iam/",
        "file:///etc/passwd",
    ):
        checked.clear()
        first = f"{upstream.root}/redirect?to={inside}"
        result = await request("GET", first, settings=HttpSettings(), guard=public_first_hop)
        assert not result.success and f"refused {inside}" in result.output, result.output
        assert checked == [first, inside]
    assert "/admin" not in upstream.paths()


async def test_redirects_are_followed_for_get_only_and_at_most_five(
    upstream: FakeUpstream,
) -> None:
    followed = await request("GET", f"{upstream.root}/redirect?to=/target", settings=LOCAL)
    assert followed.success and '"path": "/target"' in followed.output
    assert "redirected: " in followed.output

    posted = await request(
        "POST", f"{upstream.root}/redirect?status=307&to=/elsewhere", settings=LOCAL, body="x"
    )
    assert posted.output.startswith("HTTP 307")
    assert "location: /elsewhere" in posted.output and "POST was not repeated" in posted.output
    assert "/elsewhere" not in upstream.paths()

    looping = await request("GET", f"{upstream.root}/loop", settings=LOCAL)
    assert not looping.success and "more than 5 redirects" in looping.output
    assert upstream.paths().count("/loop") == 6


async def test_dot_segments_that_would_escape_a_rule_are_refused(upstream: FakeUpstream) -> None:
    result = await request("GET", f"{upstream.root}/v1/%2e%2e/admin", settings=LOCAL)
    assert not result.success and "'..' path segments" in result.output
    assert upstream.requests == []


# -- presets and secrets ------------------------------------------------------------------


async def test_preset_joins_paths_and_substitutes_env_handles_at_call_time(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_LAB_TOKEN", TOKEN)
    result = await request("GET", "/items/echo", settings=lab(upstream), preset="lab")
    _, path, headers, _ = upstream.requests[-1]
    assert path == "/api/v2/items/echo"
    assert headers["Authorization"] == f"Bearer {TOKEN}"  # reached the server
    # The server echoed it back; the tool's own result never carries the value.
    assert TOKEN not in result.output and "Bearer [REDACTED:TEST_LAB_TOKEN]" in result.output

    monkeypatch.setenv("TEST_LAB_TOKEN", "rotated-value-2")  # read per call, not at start
    await request("GET", "items", settings=lab(upstream), preset="lab")
    assert upstream.requests[-1][2]["Authorization"] == "Bearer rotated-value-2"


async def test_missing_variable_unknown_preset_and_foreign_host_are_errors(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEST_LAB_TOKEN", raising=False)
    unset = await request("GET", "items", settings=lab(upstream), preset="lab")
    assert unset.output == (
        "Error: environment variable TEST_LAB_TOKEN is not set "
        "(needed by preset lab header Authorization)"
    )
    monkeypatch.setenv("TEST_LAB_TOKEN", TOKEN)
    unknown = await request("GET", "items", settings=lab(upstream), preset="nope")
    assert unknown.output == "Error: unknown preset 'nope'; presets: lab"
    port = upstream.root.rsplit(":", 1)[1]
    foreign = await request(
        "GET", f"http://localhost:{port}/api/v2/x", settings=lab(upstream), preset="lab"
    )
    assert not foreign.success and "is not on the preset's host" in foreign.output
    relative = await request("GET", "/items", settings=LOCAL)
    assert not relative.success and "must be absolute" in relative.output
    assert upstream.requests == []


async def test_model_headers_cannot_read_env_or_replace_preset_credentials(
    upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_LAB_TOKEN", TOKEN)
    monkeypatch.setenv("OTHER_SECRET", "should-stay-home")
    await request(
        "GET",
        "echo",
        settings=lab(upstream),
        preset="lab",
        headers={"authorization": "Bearer mine", "X-Leak": "${OTHER_SECRET}"},
    )
    headers = upstream.requests[-1][2]
    assert headers["Authorization"] == f"Bearer {TOKEN}"
    assert headers["X-Leak"] == "${OTHER_SECRET}"


async def test_preset_credentials_do_not_follow_a_redirect_to_another_origin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEST_LAB_TOKEN", TOKEN)
    async with FakeUpstream() as home, FakeUpstream() as other:
        settings = lab(home)
        result = await request(
            "GET", f"/redirect?to={other.root}/echo", settings=settings, preset="lab"
        )
        assert result.success
        assert home.requests[0][2]["Authorization"] == f"Bearer {TOKEN}"
        (arrived,) = other.requests
        assert "Authorization" not in arrived[2] and TOKEN not in str(arrived)
        assert arrived[2]["Accept"] == "*/*"  # every preset header stays with its origin


# -- policy: egress, targets, rules -------------------------------------------------------


def validated(**args: Any) -> Any:
    validated = http_tool.validate({"method": "GET", "url": "https://x.example/", **args})
    assert not isinstance(validated, str), validated
    return validated


def test_get_reads_and_other_methods_write(tmp_path: Path) -> None:
    config = load_config(home=tmp_path)
    get, post = validated(method="get"), validated(method="POST")
    assert get.method == "GET"
    approval = http_tool.approval
    assert approval.egress_for(get, config) is Egress.READ_ONLY
    assert not approval.needed(get, config)
    assert http_tool.concurrency_safe(get, config)
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        write = validated(method=method)
        assert approval.egress_for(write, config) is Egress.WRITE
        assert approval.needed(write, config)
        assert not http_tool.concurrency_safe(write, config)
    assert isinstance(http_tool.validate({"method": "TRACE", "url": "https://x/"}), str)
    assert http_tool.untrusted and post.method == "POST"


def test_targets_name_method_host_and_path_and_rules_stay_narrow() -> None:
    call = validated(method="POST", url="https://API.Example.com/v1/items/42?token=abc")
    assert target(call) == "http:POST:api.example.com/v1/items/42"
    assert rule(call) == "http:POST:api.example.com/v1/*"
    pattern = rule(call)
    assert pattern is not None
    for covered in ("https://api.example.com/v1/other", "https://api.example.com/v1/a/b"):
        assert matches(pattern, target(validated(method="POST", url=covered)) or "")
    for outside in (
        ("POST", "https://api.example.com/v2/items"),
        ("POST", "https://api.example.com.evil.example/v1/items"),
        ("POST", "https://api.example.com:8443/v1/items"),
        ("DELETE", "https://api.example.com/v1/items"),
        ("POST", "https://api.example.com/v1"),
    ):
        other = target(validated(method=outside[0], url=outside[1])) or ""
        assert not matches(pattern, other), outside

    assert rule(validated(url="https://h.example/")) == "http:GET:h.example/"
    assert rule(validated(url="https://h.example/items")) == "http:GET:h.example/items"
    assert target(validated(url="http://h.example:8080/a")) == "http:GET:h.example:8080/a"
    starred = validated(url="https://h.example/a*/b")
    assert target(starred) == "http:GET:h.example/a*/b"  # literal in the target...
    assert rule(starred) == "http:GET:h.example/a\\*/*"  # ...and escaped in its rule


def test_relative_preset_targets_name_the_preset_or_its_host(tmp_path: Path) -> None:
    call = validated(method="POST", url="/repos/me/x/issues", preset="gh")
    assert target(call) == "http:POST:preset=gh/repos/me/x/issues"
    assert rule(call) == "http:POST:preset=gh/repos/*"
    config = load_config(home=tmp_path)
    config.tools = ToolsConfig.model_validate(
        {"http": {"presets": {"gh": {"base_url": "https://api.github.com"}}}}
    )
    assert target(call, config) == "http:POST:api.github.com/repos/me/x/issues"


# -- the tool as registered: config from [tools.http] --------------------------------------


async def run_tool(tmp_path: Path, table: dict[str, Any], args: dict[str, Any]) -> ToolResult:
    config = load_config(home=tmp_path)
    config.tools = ToolsConfig.model_validate({"http": table})
    store = await Store.open(tmp_path / "state.db")
    try:
        ctx = RunContext(config, MemoryStore(tmp_path / "memory"), store)
        return await http_tool.run_ungated(args, ctx)
    finally:
        await store.close()


async def test_the_tool_reads_its_config_table(tmp_path: Path, upstream: FakeUpstream) -> None:
    url = f"{upstream.root}/data"
    refused = await run_tool(tmp_path, {}, {"method": "GET", "url": url})
    assert not refused.success and "resolves to 127.0.0.1, which is loopback" in refused.output
    allowed = await run_tool(
        tmp_path, {"allow_private_networks": "true"}, {"method": "GET", "url": url}
    )
    assert allowed.success and allowed.output.startswith("HTTP 200 OK")

    bad = {"timeout_seconds": -1, "presets": {"x": {"base_url": "ftp://h"}}}
    config = load_config(home=tmp_path)
    config.tools = ToolsConfig.model_validate({"http": bad})
    problem = http_tool.config_check(config)
    assert problem is not None and problem.startswith("fix [tools.http]: timeout_seconds")
    assert "presets.x.base_url" in problem
    broken = await run_tool(tmp_path, bad, {"method": "GET", "url": url})
    assert not broken.success and "fix [tools.http]" in broken.output
    assert http_tool.config_check(load_config(home=tmp_path)) is None


async def test_the_connection_goes_to_the_checked_address_not_a_new_lookup(
    upstream: FakeUpstream,
) -> None:
    """DNS rebinding: a name may answer a public address to the check and a private one to
    the connection. The request must use the address the guard checked. `.invalid` never
    resolves, so this succeeds only if no second lookup happens."""
    port = upstream.root.rsplit(":", 1)[1]
    pinned_to: list[str] = []

    async def checked_as_loopback(url: str) -> Pinned:
        pinned_to.append(url)
        return Pinned(url, "127.0.0.1")

    url = f"http://rebind.invalid:{port}/echo"
    result = await request("GET", url, settings=HttpSettings(), guard=checked_as_loopback)
    assert result.success, result.output
    assert f'"host": "rebind.invalid:{port}"' in result.output.lower()
    method, path, headers, _ = upstream.requests[-1]
    assert (method, path, headers["Host"]) == ("GET", "/echo", f"rebind.invalid:{port}")

    # A relative redirect is joined to the name and checked (and pinned) again.
    await request(
        "GET", f"http://rebind.invalid:{port}/redirect?to=/echo", settings=HttpSettings(),
        guard=checked_as_loopback,
    )  # fmt: skip
    assert pinned_to[-1] == f"http://rebind.invalid:{port}/echo"


async def test_pin_url_refuses_names_that_resolve_to_private_addresses() -> None:
    with pytest.raises(BlockedURL):
        await pin_url("http://localhost:9/")
    assert (await pin_url("http://localhost:9/", allow_private=True)).address is None
