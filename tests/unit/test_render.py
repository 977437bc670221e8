"""Markdown → Telegram HTML rendering and message splitting."""

from __future__ import annotations

import html as htmllib
import random
import time
from html.parser import HTMLParser

import pytest

from augure.channels.telegram.render import (
    Chunk,
    escape_html,
    markdown_to_html,
    render_chunks,
    split_markdown,
    utf16_len,
)

# What the renderer may emit: a subset of what Telegram accepts.
ALLOWED_TAGS = {"b", "i", "s", "u", "code", "pre", "a", "blockquote", "tg-spoiler"}
NAMED_ENTITIES = {"lt", "gt", "amp", "quot"}


class _StrictTelegramHTML(HTMLParser):
    """Accepts only what Telegram's HTML parse mode accepts, and records the visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[str] = []
        self.visible: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = [k for k, _ in attrs]
        if tag not in ALLOWED_TAGS:
            self.errors.append(f"tag <{tag}> not allowed")
        if tag == "a":
            href = dict(attrs).get("href") or ""
            if names != ["href"] or not href.startswith(
                ("http://", "https://", "tg://", "mailto:")
            ):
                self.errors.append(f"bad <a> attributes {attrs}")
            if "a" in self.stack:
                self.errors.append("nested <a>")
        elif tag == "code" and attrs:
            cls = dict(attrs).get("class") or ""
            if names != ["class"] or not cls.startswith("language-") or self.stack[-1:] != ["pre"]:
                self.errors.append(f"bad <code> attributes {attrs}")
        elif attrs:
            self.errors.append(f"<{tag}> takes no attributes")
        if tag == "blockquote" and "blockquote" in self.stack:
            self.errors.append("nested <blockquote>")
        if self.stack and self.stack[-1] == "code":
            self.errors.append(f"<{tag}> inside <code>")
        if self.stack and self.stack[-1] == "pre" and tag != "code":
            self.errors.append(f"<{tag}> inside <pre>")
        self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.errors.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> with open {self.stack}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if any(ch in data for ch in "<>&"):
            self.errors.append(f"unescaped text {data[:40]!r}")
        self.visible.append(data)

    def handle_entityref(self, name: str) -> None:
        if name not in NAMED_ENTITIES:
            self.errors.append(f"entity &{name};")
        self.visible.append(htmllib.unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        self.visible.append(htmllib.unescape(f"&#{name};"))

    def handle_comment(self, data: str) -> None:
        self.errors.append("comment")

    def handle_decl(self, decl: str) -> None:
        self.errors.append("declaration")

    def handle_pi(self, data: str) -> None:
        self.errors.append("processing instruction")

    def unknown_decl(self, data: str) -> None:
        self.errors.append("unknown declaration")


def visible_text(html: str) -> str:
    """Validate `html` as Telegram would and return the text it displays."""
    parser = _StrictTelegramHTML()
    parser.feed(html)
    parser.close()
    assert not parser.errors, (parser.errors, html[:500])
    assert not parser.stack, (f"unclosed {parser.stack}", html[:500])
    return "".join(parser.visible)


def check_chunks(chunks: list[Chunk], limit: int) -> None:
    for c in chunks:
        assert c.html and c.plain.strip()
        assert c.html == c.html.strip()
        assert utf16_len(c.html) <= limit, utf16_len(c.html)
        assert utf16_len(c.plain) <= limit, utf16_len(c.plain)
        assert utf16_len(visible_text(c.html)) <= limit


def _is_fence_line(line: str) -> bool:
    s = line.strip()
    return len(s) >= 3 and s[0] in "`~" and s.startswith(s[0] * 3)


def assert_recovers(original: str, chunks: list[Chunk]) -> None:
    """The parts' plain text, in order, is the original: nothing lost, nothing repeated,
    allowing only whitespace at cut points and fence lines added to close and reopen
    a split code block."""
    target = "".join(original.split())
    positions = {0}  # where in the original the parts so far may have ended
    for n, chunk in enumerate(chunks):
        lines = chunk.plain.split("\n")
        variants = [lines]
        if len(lines) > 1 and _is_fence_line(lines[0]):
            variants.append(lines[1:])
        if len(lines) > 1 and _is_fence_line(lines[-1]):
            variants += [v[:-1] for v in list(variants) if len(v) > 1]
        texts = {"".join("".join(v).split()) for v in variants}
        positions = {p + len(t) for p in positions for t in texts if target.startswith(t, p)}
        assert positions, (n, chunk.plain[:200])
    assert len(target) in positions


@pytest.mark.parametrize(
    "bad",
    [
        "a & b",
        "a < b",
        "<b>x</i>",
        "<b>x",
        "<pre><b>x</b></pre>",
        "<span>x</span>",
        "&nbsp;",
        '<a href="javascript:x">y</a>',
        "<blockquote><blockquote>x</blockquote></blockquote>",
    ],
)
def test_the_checker_itself_rejects_bad_markup(bad: str) -> None:
    with pytest.raises(AssertionError):
        visible_text(bad)


# --- escaping and measuring ----------------------------------------------------------


def test_escape_html() -> None:
    assert escape_html("a < b > c & d") == "a &lt; b &gt; c &amp; d"
    assert escape_html('"q"') == '"q"'
    assert escape_html('"q"&', quote=True) == "&quot;q&quot;&amp;"


def test_utf16_len_counts_astral_characters_twice() -> None:
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("é") == 1
    assert utf16_len("😀") == 2
    assert utf16_len("👍🏽") == 4
    assert utf16_len("\ud800") == 1  # a lone surrogate must not crash


# --- markdown_to_html ----------------------------------------------------------------


def test_text_is_escaped() -> None:
    assert markdown_to_html("if a < b && c > d") == "if a &lt; b &amp;&amp; c &gt; d"


def test_entities_in_the_source_are_shown_as_written_meaning() -> None:
    assert markdown_to_html("AT&amp;T &lt;3") == "AT&amp;T &lt;3"


def test_inline_code_is_escaped() -> None:
    assert markdown_to_html("`if a<b && c>d`") == "<code>if a&lt;b &amp;&amp; c&gt;d</code>"


def test_emphasis() -> None:
    assert markdown_to_html("**bold** _it_ *it2* __b2__ ~~gone~~") == (
        "<b>bold</b> <i>it</i> <i>it2</i> <b>b2</b> <s>gone</s>"
    )
    assert markdown_to_html("***both***") == "<i><b>both</b></i>"


def test_spoiler_stays_literal() -> None:
    assert markdown_to_html("||secret||") == "||secret||"


def test_fenced_code_with_language() -> None:
    md = "```python\nif a < b and c > d & e:\n    pass\n```"
    assert markdown_to_html(md) == (
        '<pre><code class="language-python">if a &lt; b and c &gt; d &amp; e:\n'
        "    pass</code></pre>"
    )


def test_fenced_code_without_language_and_indented_code() -> None:
    assert markdown_to_html("~~~\n<x>\n~~~") == "<pre>&lt;x&gt;</pre>"
    assert markdown_to_html("text\n\n    indented <code>") == (
        "text\n\n<pre>indented &lt;code&gt;</pre>"
    )


def test_language_is_escaped_in_the_attribute() -> None:
    html = markdown_to_html('```a"b<c\nx\n```')
    assert html == '<pre><code class="language-a&quot;b&lt;c">x</code></pre>'
    visible_text(html)


def test_headings_become_bold_lines() -> None:
    assert markdown_to_html("# Title\nbody\n\n## Sub *x*\n\nSetext\n===") == (
        "<b>Title</b>\n\nbody\n\n<b>Sub <i>x</i></b>\n\n<b>Setext</b>"
    )


def test_paragraphs_and_line_breaks() -> None:
    assert markdown_to_html("one\ntwo\n\n\n\nthree  \nfour\n\n") == "one\ntwo\n\nthree\nfour"


def test_bullet_and_nested_lists() -> None:
    md = "- one\n- two\n  - inner *a*\n  - inner b\n- three"
    assert markdown_to_html(md) == "• one\n• two\n  • inner <i>a</i>\n  • inner b\n• three"


def test_ordered_list_keeps_its_start() -> None:
    assert markdown_to_html("3. c\n4. d\n   more") == "3. c\n4. d\n   more"
    assert markdown_to_html("1) a\n2) b") == "1. a\n2. b"


def test_loose_list_keeps_blank_lines() -> None:
    assert markdown_to_html("- a\n\n- b") == "• a\n\n• b"


def test_links() -> None:
    assert markdown_to_html("[site](https://ex.com/?a=1&b=2)") == (
        '<a href="https://ex.com/?a=1&amp;b=2">site</a>'
    )
    assert markdown_to_html("<https://auto.link/x>") == (
        '<a href="https://auto.link/x">https://auto.link/x</a>'
    )
    assert markdown_to_html("<me@example.com>") == (
        '<a href="mailto:me@example.com">me@example.com</a>'
    )
    assert markdown_to_html("[ref][r]\n\n[r]: tg://resolve?domain=x") == (
        '<a href="tg://resolve?domain=x">ref</a>'
    )


def test_quote_in_url_cannot_break_out_of_the_attribute() -> None:
    html = markdown_to_html('[x](<https://e.com/"onclick="y>)')
    assert '"onclick' not in html
    visible_text(html)


def test_unsafe_and_relative_links_stay_text() -> None:
    html = markdown_to_html("[click](javascript:alert(1)) [rel](/local) [ftp](ftp://x)")
    assert "<a" not in html
    assert "click" in html and "rel" in html
    visible_text(html)


def test_images_become_link_text() -> None:
    assert markdown_to_html("![a cat](https://e.com/cat.png)") == (
        '<a href="https://e.com/cat.png">a cat</a>'
    )
    assert markdown_to_html("![local](cat.png)") == "local"
    html = markdown_to_html("[![badge](https://b.png)](https://e.com)")
    assert html == '<a href="https://e.com">badge</a>'


def test_empty_link_text_shows_the_address() -> None:
    assert markdown_to_html("[](https://e.com)") == '<a href="https://e.com">https://e.com</a>'


def test_raw_html_from_the_model_is_escaped() -> None:
    assert markdown_to_html("hi <b>there</b> <script>alert(1)</script>") == (
        "hi &lt;b&gt;there&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;"
    )
    html = markdown_to_html('<div class="x">\n<img src=x onerror=alert(1)>\n</div>')
    assert "<div" not in html and "<img" not in html
    assert "&lt;div" in html
    visible_text(html)


def test_table_becomes_aligned_pre() -> None:
    md = "| Name | Qty | Note |\n|:--|--:|:-:|\n| apple | 3 | a<b |\n| kiwi | 12 | ok |"
    assert markdown_to_html(md) == (
        "<pre>Name  | Qty | Note\n------+-----+-----\napple |   3 | a&lt;b\nkiwi  |  12 |  ok</pre>"
    )


def test_blockquote_and_nested_blockquote() -> None:
    assert markdown_to_html("> quoted *x*\n>\n> > inner") == (
        "<blockquote>quoted <i>x</i>\n\ninner</blockquote>"
    )


def test_horizontal_rule() -> None:
    assert markdown_to_html("above\n\n---\n\nbelow") == "above\n\n———\n\nbelow"


def test_empty_and_blank_input() -> None:
    assert markdown_to_html("") == ""
    assert markdown_to_html("  \n\n\t\n") == ""


def test_everything_together_is_valid_telegram_html() -> None:
    md = (
        "# T<1>\n\nText & **b _bi_** ~~s~~ `c<>` [l](http://x.y?a&b)\n\n"
        "- a\n  1. b\n     > q\n\n| a |\n|---|\n| <x> |\n\n```js\nx => x < 1 && y\n```\n"
        "***\n\n<p>raw</p>\n\n![i](https://i.png) **![](rel.png)**"
    )
    visible_text(markdown_to_html(md))


# --- render_chunks / split_markdown -------------------------------------------------


def test_nothing_to_send() -> None:
    assert render_chunks("") == []
    assert render_chunks("   \n\n \t ") == []
    assert split_markdown("") == []


def test_short_reply_is_one_chunk() -> None:
    md = "\n\nHello **there** <you>\n\n"
    assert render_chunks(md) == [
        Chunk(html="Hello <b>there</b> &lt;you&gt;", plain="Hello **there** <you>")
    ]
    assert split_markdown(md) == ["Hello **there** <you>"]


def _long_reply() -> str:
    rnd = random.Random(7)
    words = ["alpha", "beta", "<gamma>", "a&b", "**bold**", "_it_", "`x<y`", "delta"]
    parts = ["# Report\n\nHere is the *long* answer you asked for."]
    for i in range(11):
        parts.append(" ".join(rnd.choice(words) for _ in range(60)))
        if i % 3 == 1:
            body = "\n".join(f"v{j} = {j} < {j + 1} and {j} > 0  # & more" for j in range(10))
            parts.append(f"```python\n{body}\n```")
    big = "\n".join(f"def f{j}(a, b):\n    return a < b and b > {j}" for j in range(120))
    parts.append(f"Now the big one:\n\n```python\n{big}\n```")
    parts.append("- item one\n- item two\n\nThe end.")
    return "\n\n".join(parts)


def test_long_reply_splits_within_limit_and_keeps_code_balanced() -> None:
    md = _long_reply()
    assert len(md) >= 10_000
    big = md[md.index("```python\ndef f0") :]
    assert len(big[: big.index("\n```", 10) + 4]) > 4096
    chunks = render_chunks(md)
    check_chunks(chunks, 4096)
    assert_recovers(md, chunks)
    assert 3 <= len(chunks) <= 6
    code_parts = [c for c in chunks if "def f" in c.plain]
    assert len(code_parts) >= 2
    for c in code_parts:
        assert '<pre><code class="language-python">' in c.html
        fences = [ln for ln in c.plain.split("\n") if ln.startswith("```")]
        assert len(fences) % 2 == 0
    # the code was cut on a line boundary and reopened with its language
    assert code_parts[0].plain.endswith("\n```")
    assert code_parts[1].plain.startswith("```python\n")
    assert split_markdown(md) == [c.plain for c in chunks]


def test_long_reply_renders_fast() -> None:
    md = _long_reply()
    render_chunks(md)
    n = 20
    start = time.perf_counter()
    for _ in range(n):
        render_chunks(md)
    per_call = (time.perf_counter() - start) / n
    print(f"render_chunks on {len(md)} chars: {per_call * 1000:.2f} ms")
    assert per_call < 0.05  # typically well under 10 ms; loose to stay stable on slow CI


def test_paragraphs_are_packed_greedily() -> None:
    md = "\n\n".join(f"Paragraph {i} " + "x" * 90 for i in range(100))
    chunks = render_chunks(md)
    check_chunks(chunks, 4096)
    assert_recovers(md, chunks)
    assert len(chunks) == 3
    assert all(c.plain.startswith("Paragraph") for c in chunks)


def test_single_long_line_without_spaces_is_cut_hard() -> None:
    md = "".join(chr(ord("a") + i % 26) for i in range(9000))
    chunks = render_chunks(md)
    check_chunks(chunks, 4096)
    assert len(chunks) == 3
    assert "".join(c.plain for c in chunks) == md


def test_long_line_is_cut_on_whitespace() -> None:
    md = " ".join(f"word{i:05d}" for i in range(1000))
    chunks = render_chunks(md, 1000)
    check_chunks(chunks, 1000)
    assert_recovers(md, chunks)
    for c in chunks:
        assert all(w.startswith("word") and len(w) == 9 for w in c.plain.split(" "))


def test_escaping_growth_is_measured() -> None:
    md = "<&>" * 2000  # 6000 source units become 26000 units of HTML
    chunks = render_chunks(md)
    check_chunks(chunks, 4096)
    assert "".join(c.plain for c in chunks) == md
    assert len(chunks) >= 7


def test_emoji_count_as_two_units_at_the_limit() -> None:
    exactly = "a" * 4094 + "😀"  # 4095 code points, 4096 UTF-16 units
    assert [c.plain for c in render_chunks(exactly)] == [exactly]
    over = "a" * 4095 + "😀"  # 4096 code points, but 4097 UTF-16 units
    chunks = render_chunks(over)
    check_chunks(chunks, 4096)
    assert len(chunks) == 2
    assert "".join(c.plain for c in chunks) == over
    faces = "😀" * 3000
    chunks = render_chunks(faces)
    check_chunks(chunks, 4096)
    assert "".join(c.plain for c in chunks) == faces
    assert len(chunks) == 2 and utf16_len(chunks[0].plain) >= 3600


def test_long_list_is_cut_between_items() -> None:
    md = "\n".join(f"{i}. item number {i} " + "y" * 60 for i in range(1, 200))
    chunks = render_chunks(md, 2000)
    check_chunks(chunks, 2000)
    assert_recovers(md, chunks)
    for c in chunks:
        first = c.plain.split("\n")[0]
        assert first.split(".")[0].isdigit()
        assert c.html.startswith(first.split(".")[0] + ". item")


def test_tilde_fence_is_reopened_with_the_same_fence() -> None:
    md = "intro\n\n~~~~ sh extra\n" + "\n".join(f"echo {i} > out" for i in range(300)) + "\n~~~~"
    chunks = render_chunks(md, 1500)
    check_chunks(chunks, 1500)
    assert_recovers(md, chunks)
    code = [c for c in chunks if "echo" in c.plain]
    assert len(code) >= 3
    assert "~~~~ sh extra\necho 0 > out\n" in code[0].plain
    for c in code:
        assert c.plain.endswith("\n~~~~")
        assert c.html.endswith("</code></pre>")
    for c in code[1:]:
        assert c.plain.startswith("~~~~sh\n")
        assert c.html.startswith('<pre><code class="language-sh">')


def test_code_line_longer_than_the_limit() -> None:
    md = "```\n" + "z" * 9000 + "\n```"
    chunks = render_chunks(md)
    check_chunks(chunks, 4096)
    assert_recovers(md, chunks)
    assert all(c.html.startswith("<pre>") for c in chunks)


def test_unclosed_fence_is_split() -> None:
    md = "```go\n" + "\n".join(f"x := {i} // <{i}>" for i in range(500))
    chunks = render_chunks(md)
    check_chunks(chunks, 4096)
    assert_recovers(md, chunks)
    assert all(c.html.startswith('<pre><code class="language-go">') for c in chunks)


def test_references_reach_links_in_other_parts() -> None:
    md = "see [the docs][d]\n\n" + "filler text. " * 400 + "\n\n[d]: https://docs.example"
    chunks = render_chunks(md)
    check_chunks(chunks, 4096)
    assert '<a href="https://docs.example">the docs</a>' in chunks[0].html


def test_long_blockquote_is_quoted_in_every_part() -> None:
    md = "\n".join(f"> line {i} of a long quotation & more" for i in range(300))
    chunks = render_chunks(md, 2000)
    check_chunks(chunks, 2000)
    assert_recovers(md, chunks)
    assert len(chunks) > 1
    assert all(c.html.startswith("<blockquote>") for c in chunks)


def test_crlf_line_endings() -> None:
    assert markdown_to_html("a\r\nb\r\n\r\n- c\r\n") == "a\nb\n\n• c"
    assert render_chunks("x\r\n\r\n") == [Chunk(html="x", plain="x")]


def test_chunk_is_frozen() -> None:
    chunk = Chunk(html="a", plain="a")
    with pytest.raises(AttributeError):
        chunk.html = "b"  # type: ignore[misc]


def test_tiny_limits_still_terminate() -> None:
    md = "# h\n\n```python\nprint('<x>')\n```\n\n- a\n- b\n\n" + "w " * 100
    for limit in (1, 10, 32, 50):
        chunks = render_chunks(md, limit)
        assert chunks
        for c in chunks:
            visible_text(c.html)
            assert utf16_len(c.html) <= max(limit, 32)
        assert_recovers(md, chunks)


FRAGMENTS = [
    "word ",
    "more words here ",
    "x" * 60,
    "**",
    "*",
    "_",
    "~~",
    "||",
    "`",
    "\\",
    "<",
    ">",
    "&",
    "&amp;",
    '"',
    "😀",
    "é",
    " ",
    "    ",
    "\t",
    "\n",
    "\n",
    "\n\n",
    "\r\n",
    "# ",
    "## ",
    "- ",
    "  - ",
    "1. ",
    "7) ",
    "> ",
    "> > ",
    "---\n",
    "===\n",
    "```",
    "```python\n",
    "~~~\n",
    "\n```\n",
    "<b>",
    "</i>",
    "<div>\n",
    "<!-- c -->",
    "[x](http://a.b/?q=1&r=2)",
    "[y](javascript:alert(1))",
    "[z](/rel)",
    "![img](https://i.png)",
    "<https://auto.link>",
    "[r][ref]",
    "\n[ref]: https://r.example\n",
    "| a | b |\n|---|--:|\n| 1 | 2 |\n",
    "|",
    "[",
    "](",
    ")",
]


def _random_markdown(rnd: random.Random) -> str:
    n = rnd.choice([0, 1, 5, 20, 80, 250, 700])
    return "".join(rnd.choice(FRAGMENTS) for _ in range(n))


def test_fuzz_never_raises_and_respects_limits() -> None:
    rnd = random.Random(20240601)
    for _ in range(300):
        md = _random_markdown(rnd)
        limit = rnd.choice([32, 64, 200, 700, 4096])
        visible_text(markdown_to_html(md))
        chunks = render_chunks(md, limit)
        check_chunks(chunks, limit)
        assert_recovers(md, chunks)
        parts = split_markdown(md, limit)
        assert parts == [c.plain for c in chunks]
        for part in parts:  # each part is also sound Markdown on its own
            visible_text(markdown_to_html(part))


@pytest.mark.parametrize("md", ["> " * 60 + "deep text", "- " * 60 + "deep text"])
def test_absurd_nesting_is_never_silently_dropped(md: str) -> None:
    assert "deep text" in visible_text(markdown_to_html(md))
    chunks = render_chunks(md)
    check_chunks(chunks, 4096)
    assert "deep text" in visible_text(chunks[0].html)


@pytest.mark.parametrize(
    "md",
    ["```", "```\n", "~~~~~~~~", "\0", "\r", "[", "![", "> " * 50 + "x", "- " * 60 + "x"],
)
def test_odd_inputs(md: str) -> None:
    visible_text(markdown_to_html(md))
    chunks = render_chunks(md, 64)
    check_chunks(chunks, 64)


def test_a_plain_line_renders_as_the_full_parser_renders_it() -> None:
    """The fast path for a line of plain prose gives what markdown-it gives, on every line it
    takes; lines it refuses go to the parser."""
    from augure.channels.telegram import render

    rng = random.Random(16)
    alphabet = [*"abcXYZ &<*_0123456789.,;:!?()'\"/-+=%$@^{}", "é", "😀", "\u00a0", "\u202e"]
    samples = ["ok", "Hello, world!", "Done: 3 files (see /tmp/x).", "1.5 is more than 1", "-1"]
    samples += ["".join(rng.choices(alphabet, k=rng.randint(1, 40))) for _ in range(4000)]
    taken = 0
    for line in samples:
        if not render._plain_line(line, render.TELEGRAM_LIMIT):
            continue
        taken += 1
        full = [render.Chunk(html=h, plain=p) for p, h in render._safe_split(line, 4096)]
        assert render.render_chunks(line) == full, line
    assert taken > 500  # the comparison ran on many lines, not on none
