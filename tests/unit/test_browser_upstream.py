"""Which proxy the browser's guard goes out through, read from the environment."""

from __future__ import annotations

import pytest

from augure.tools.browser.upstream import parse_proxy, proxy_for

VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_each_kind_of_request_takes_its_own_variable_then_all_proxy(
    env: pytest.MonkeyPatch,
) -> None:
    env.setenv("HTTPS_PROXY", "http://tunnel.lan:3128")
    env.setenv("ALL_PROXY", "socks5://all.lan")
    assert str(proxy_for("https", "example.org")) == "http://tunnel.lan:3128"
    assert str(proxy_for("http", "example.org")) == "socks5://all.lan:1080"


def test_no_proxy_names_and_domains_go_direct(env: pytest.MonkeyPatch) -> None:
    env.setenv("ALL_PROXY", "http://proxy.lan:3128")
    env.setenv("NO_PROXY", "intranet.example, .corp.example")
    assert proxy_for("https", "intranet.example") is None
    assert proxy_for("https", "wiki.corp.example") is None
    assert proxy_for("https", "example.org") is not None


def test_without_variables_the_guard_goes_direct(env: pytest.MonkeyPatch) -> None:
    assert proxy_for("https", "example.org") is None


def test_a_proxy_is_named_without_its_credentials() -> None:
    proxy = parse_proxy("http://owner:p%40ss@proxy.lan:3128")
    assert (proxy.username, proxy.password) == ("owner", "p@ss")
    assert str(proxy) == "http://proxy.lan:3128"
    assert proxy.authorization() == "Proxy-Authorization: Basic b3duZXI6cEBzcw=="


def test_socks5_is_given_the_checked_address_and_socks5h_the_name() -> None:
    assert not parse_proxy("socks5://127.0.0.1:1080").resolves_names
    assert parse_proxy("socks5h://127.0.0.1:1080").resolves_names
    assert parse_proxy("proxy.lan:3128").speaks_http  # a bare host:port is an HTTP proxy


def test_another_scheme_is_refused_without_repeating_the_password() -> None:
    with pytest.raises(OSError) as caught:
        parse_proxy("socks4://owner:secret@proxy.lan:1080")
    assert "socks4://" in str(caught.value) and "secret" not in str(caught.value)
