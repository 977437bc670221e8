"""How an answer goes out for what it drew on (augure.channels.telegram.showing): link
previews, links with their addresses, the sources line."""

from __future__ import annotations

from augure.channels.telegram.render import utf16_len
from augure.channels.telegram.showing import Showing
from augure.common.ports import NOT_KNOWN, Sources

PAGE = Sources(("news.example",))


def test_previews_only_where_the_owner_wants_them_and_nothing_outside_was_read() -> None:
    assert Showing().previews(Sources()).is_disabled
    wants = Showing(link_previews=True)
    assert not wants.previews(Sources()).is_disabled
    assert wants.previews(PAGE).is_disabled
    assert wants.previews(NOT_KNOWN).is_disabled  # a job's result: nobody can tell


def test_a_link_of_an_answer_that_drew_on_a_page_shows_its_address() -> None:
    (chunk,) = Showing().chunks(
        "Done. [.](https://evil.example/?pin=1) and ![map](https://m.example/a.png)", PAGE
    )
    assert "<a " not in chunk.html
    assert ". (https://evil.example/?pin=1)" in chunk.html
    assert "map (https://m.example/a.png)" in chunk.html
    assert chunk.html.endswith("\n\n<i>from: news.example</i>")
    assert chunk.plain.endswith("\n\nfrom: news.example")


def test_a_link_whose_text_is_its_address_is_shown_once() -> None:
    (chunk,) = Showing().chunks("See <https://docs.example/a>.", PAGE)
    assert chunk.html.count("https://docs.example/a") == 1


def test_an_answer_of_the_owners_own_work_keeps_its_links_and_has_no_line() -> None:
    (chunk,) = Showing().chunks("See [the docs](https://docs.example/a).", Sources())
    assert chunk.html == 'See <a href="https://docs.example/a">the docs</a>.'


def test_a_job_result_shows_addresses_but_names_no_sources() -> None:
    (chunk,) = Showing().chunks("[here](https://x.example/)", NOT_KNOWN)
    assert chunk.html == "here (https://x.example/)"


def test_show_sources_off_leaves_out_the_line_but_not_the_addresses() -> None:
    (chunk,) = Showing(show_sources=False).chunks("[here](https://x.example/)", PAGE)
    assert chunk.html == "here (https://x.example/)"


def test_the_line_goes_on_the_last_part_and_every_part_fits() -> None:
    long = "\n\n".join(f"Paragraph {n}: " + "word " * 150 for n in range(12))
    chunks = Showing().chunks(long, PAGE, limit=4096)
    assert len(chunks) > 1
    assert all(utf16_len(c.html) <= 4096 for c in chunks)
    assert chunks[-1].html.endswith("<i>from: news.example</i>")
    assert not any("from: news.example" in c.html for c in chunks[:-1])


def test_the_line_names_three_sources_at_most() -> None:
    many = Sources(("a.example", "b.example", "mail", "c.example", "d.example"))
    assert many.line == "from: a.example, b.example, mail and 2 more"
    assert Sources().line == ""
