import ipaddress

import pytest

from augure.tools.netguard import BlockedURL, check_url, classify


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "a cloud metadata address"),
        ("169.254.10.10", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::ffff:127.0.0.1", "loopback"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("100.64.1.1", "carrier-grade NAT (private)"),
        ("93.184.216.34", None),
        ("2606:4700::1111", None),
    ],
)
def test_classify(address: str, reason: str | None) -> None:
    assert classify(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/admin",
        "http://localhost/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0x7f000001/",
        "http://2130706433/",
        "file:///etc/passwd",
        "gopher://example.com/",
        "http://user:pass@example.com/",
        "http:///nohost",
    ],
)
async def test_refused(url: str) -> None:
    with pytest.raises(BlockedURL):
        await check_url(url)


async def test_private_allowed_when_configured() -> None:
    assert await check_url("http://127.0.0.1:9/x", allow_private=True) == "http://127.0.0.1:9/x"
    with pytest.raises(BlockedURL):
        await check_url("file:///etc/passwd", allow_private=True)
