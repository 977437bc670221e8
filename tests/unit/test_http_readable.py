"""`http` GET of an HTML page (docs/reference/tools.md#http): its readable text by default,
the markup with `raw: true`. The page is a saved fixture served over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from augure.config.settings import load_config
from augure.config.tools import ToolsConfig
from augure.memory.store import MemoryStore
from augure.store.state import Store
from augure.tools.base import RunContext
from augure.tools.http import HttpSettings, http_tool
from augure.tools.http.request import request
from tests.fakes.search import FakeUpstream

LOCAL = HttpSettings(allow_private_networks=True)


@pytest.fixture
async def upstream() -> AsyncIterator[FakeUpstream]:
    async with FakeUpstream() as server:
        yield server


async def test_an_html_page_comes_back_as_readable_text(upstream: FakeUpstream) -> None:
    url = f"{upstream.root}/travel/article.html"
    result = await request("GET", url, settings=LOCAL)

    assert result.success, result.output
    assert result.output.startswith("HTTP 200 OK\ncontent-type: text/html")
    body = result.output.split("\n\n", 1)[1]
    assert body.startswith("Title: Night trains return to the Alps")
    assert "# Night trains return to the Alps as rail operators bet on sleepers" in body
    assert "\n## What a berth costs\n" in body and "\n### How to book\n" in body
    assert "- Mini cabins for solo travellers, with a lockable door" in body
    assert "1. Tickets go on sale 90 days before departure" in body
    # Links keep their text and become absolute against the page's address.
    proposal = f"[A proposal from the European Commission]({upstream.root}/world/2026/sep/02/"
    assert proposal in body
    assert "[Back on Track](https://www.backontrack.example/)" in body
    # What no reader reads is gone: scripts, styles, icons, the site's menus and footer.
    for markup in ("<script", "gtag(", "--brand:", "<svg", "<div", "class="):
        assert markup not in body
    assert "Cookie policy" not in body and "Skiing" not in body and "Most viewed" not in body
    assert body.rstrip().endswith("`raw: true` returns its HTML]")


async def test_raw_true_returns_the_markup(tmp_path: Path, upstream: FakeUpstream) -> None:
    config = load_config(home=tmp_path)
    config.tools = ToolsConfig.model_validate({"http": {"allow_private_networks": True}})
    store = await Store.open(tmp_path / "state.db")
    ctx = RunContext(config, MemoryStore(tmp_path / "memory"), store)
    url = f"{upstream.root}/travel/article.html"
    try:
        raw = await http_tool.run_ungated({"method": "GET", "url": url, "raw": True}, ctx)
        readable = await http_tool.run_ungated({"method": "GET", "url": url}, ctx)
    finally:
        await store.close()

    page = (Path(__file__).parents[1] / "fixtures" / "pages" / "article.html").read_text()
    assert raw.success and readable.success
    assert page in raw.output
    assert "<script" not in readable.output and "Title: Night trains" in readable.output


async def test_json_and_plain_text_are_not_touched(upstream: FakeUpstream) -> None:
    result = await request("GET", f"{upstream.root}/data", settings=LOCAL)
    assert '"hello": "world"' in result.output and "raw: true" not in result.output
