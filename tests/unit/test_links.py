"""Links as the egress check compares them, and what a `Reading` counts as offered
(docs/security.md, "No leak after outside content"). The ways in are in
tests/security/test_vulnerability_leaks*.py; these pin the pieces they stand on."""

from __future__ import annotations

import pytest

from augure.common import links
from augure.common.caller import Reading
from augure.config.approval import ApprovalConfig
from augure.tools import leaks


def test_two_spellings_of_one_place_compare_equal() -> None:
    assert links.link("HTTPS://Example.COM") == links.link("http://example.com:80/")
    assert links.link("www.example.com/x") == links.link("https://www.example.com/x")
    assert links.link("10.0.0.5:8080/a?b=1") == "10.0.0.5:8080/a?b=1"
    assert links.link("https://e.io/A") != links.link("https://e.io/a")  # the path counts


def test_words_numbers_and_other_schemes_are_not_links() -> None:
    for text in ("hello", "4821-7730", "3.14", "4821.7730", "data:text/html,x", "ftp://e.io/"):
        assert links.link(text) is None, text


def test_a_text_offers_each_link_whole() -> None:
    text = (
        "[0](http://e.io/d/0)[1](http://e.io/d/1) see [w](https://en.wiki.org/Foo_(bar)). "
        'and <http://x.y/z>, www.foo.org/q?x=1. "http://q.r/s"'
    )
    assert list(links.written_in(text)) == [
        "e.io/d/0",
        "e.io/d/1",
        "en.wiki.org/Foo_(bar)",
        "x.y/z",
        "www.foo.org/q?x=1",
        "q.r/s",
    ]


def test_a_piece_of_a_pages_text_is_not_offered() -> None:
    reading = Reading(owner=["read the page"])
    reading.read("codes: http://e.io/4821 http://e.io/7730", "http")
    assert reading.offered_by("e.io/4821") == {"page"}
    assert reading.offered_by("e.io/48") == set()
    assert reading.offered_by("e.io/48217730") == set()


def test_a_trusted_result_after_outside_content_and_an_error_offer_nothing() -> None:
    reading = Reading()
    reading.read("bookmarks: https://owner.example/a", None)  # before the page: the owner's
    reading.read("a page", "http")
    reading.read("later: https://e.io/composed", None)  # read back after it
    reading.read("unknown time zone 'https://e.io/echo'", None, failed=True)
    reading.read("404 for https://e.io/other", "http", failed=True)
    assert reading.offered_by("owner.example/a") == {"trusted"}
    assert reading.offered_by("e.io/composed") == set()
    assert reading.offered_by("e.io/echo") == set()
    assert reading.offered_by("e.io/other") == set()


def test_what_the_unit_read_meanwhile_comes_after_its_history() -> None:
    def history(reading: Reading) -> None:
        reading.read("an earlier page", "http")

    reading = Reading(earlier=history)
    reading.read("memory: https://e.io/composed", None)  # this turn, after the page
    assert reading.tainted and reading.offered_by("e.io/composed") == set()


def test_a_choice_among_many_links_weighs_more() -> None:
    assert leaks.weight(1) == leaks.weight(3) == leaks.weight(256) == 1
    assert leaks.weight(257) == leaks.weight(10_000) == leaks.weight(65_536) == 2
    assert leaks.weight(65_537) == 3


def test_the_checks_verdicts() -> None:
    settings = ApprovalConfig()
    reading = Reading(owner=["what is on http://news.example/ ?"])
    reading.read("[mail](https://stranger.example/x) [go](https://e.io/p)", "http")
    reading.read("see https://party.example/invite", "email", "message")
    assert leaks.assess(reading, ["http://news.example/"], settings) is None
    assert leaks.assess(reading, ["https://e.io/p"], settings) is None  # counted: 1
    assert reading.fetches == 1
    reading.sent_out(["https://e.io/p"])
    assert leaks.assess(reading, ["e.io/p"], settings) is None  # again: not counted
    assert reading.fetches == 1
    message = leaks.assess(reading, ["https://party.example/invite"], settings)
    assert message is not None and "message" in message.why
    composed = leaks.assess(reading, ["https://e.io/p?d=4821"], settings)
    assert composed is not None and "composed" in composed.why
    header = leaks.assess(reading, ["https://e.io/p", "X-Data: 4821"], settings)
    assert header is not None and header.text == "X-Data: 4821"


def test_the_owner_may_name_a_place_without_its_scheme() -> None:
    said = links.said_in("please read example.com/docs, and (www.news.org).")
    assert said == {"example.com/docs", "www.news.org/"}
    reading = Reading(owner=["please read example.com/docs"])
    reading.read("a page", "http")
    assert leaks.assess(reading, ["https://example.com/docs"], ApprovalConfig()) is None


@pytest.mark.parametrize(
    ("configured", "named"),
    [
        ("https://owner:s3cret@dav.example:8443/cal/?token=x#y", "https://dav.example:8443/cal/"),
        ("http://[::1]:5232/", "http://[::1]:5232/"),
        ("https://hub.example/skills.json", "https://hub.example/skills.json"),
    ],
)
def test_a_configured_address_is_named_without_its_login(configured: str, named: str) -> None:
    assert links.without_login(configured) == named
