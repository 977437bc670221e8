"""One loopback server speaking the search APIs of Tavily, Exa and SearXNG, for tests.

Each lives under its own prefix, which becomes the provider's `base_url`::

    async with FakeSearch(tavily_key="tvly-1", exa_key="exa-1") as fake:
        fake.base_url("tavily")  # -> http://127.0.0.1:PORT/tavily, POST /search
        fake.base_url("exa")     # -> .../exa, POST /search with `x-api-key`
        fake.base_url("searxng") # -> .../searxng, GET /search?q=...&format=json

Responses have each API's real shape; a wrong key gets the provider's real 401 answer.
`fail_status` makes every search answer that status; `delay` holds every answer back.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from aiohttp import web
from multidict import CIMultiDict

from tests.fakes.server import FakeServer

CORPUS_SIZE = 10  # results a query finds; SearXNG returns them all, the others `max_results`


@dataclass
class Seen:
    provider: str
    headers: dict[str, str]
    payload: dict[str, Any]


def corpus(query: str) -> list[dict[str, str]]:
    words = " ".join(["Lorem ipsum dolor sit amet, consectetur adipiscing elit."] * 12)
    return [
        {
            "title": f"{query} — result {n}",
            "url": f"https://site{n}.example/{query.replace(' ', '-')}",
            "content": f"About {query}, number {n}. {words}",
        }
        for n in range(1, CORPUS_SIZE + 1)
    ]


class FakeSearch(FakeServer):
    runner_options: ClassVar[dict[str, Any]] = {"handler_cancellation": True}

    def __init__(
        self,
        tavily_key: str = "tvly-test-key",
        exa_key: str = "exa-test-key",
        searxng_key: str | None = None,
    ) -> None:
        self.keys = {"tavily": tavily_key, "exa": exa_key, "searxng": searxng_key}
        self.requests: list[Seen] = []
        # What a query finds; a test may point the results at pages it serves.
        self.corpus: Callable[[str], list[dict[str, str]]] = corpus
        self.fail_status: int | None = None
        self.delay = 0.0
        self.root = ""

    def base_url(self, provider: str) -> str:
        return f"{self.root}/{provider}"

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/tavily/search", self._tavily)
        app.router.add_post("/exa/search", self._exa)
        app.router.add_get("/searxng/search", self._searxng)
        return app

    def _started(self) -> None:
        self.root = self.origin

    async def _arrive(self, provider: str, request: web.Request) -> dict[str, Any]:
        if request.method == "POST":
            payload: dict[str, Any] = await request.json()
        else:
            payload = dict(request.query)
        self.requests.append(Seen(provider, dict(request.headers), payload))
        if self.delay:
            await asyncio.sleep(self.delay)
        return payload

    def _failure(self) -> web.Response | None:
        if self.fail_status is None:
            return None
        return web.json_response({"error": "scripted failure"}, status=self.fail_status)

    async def _tavily(self, request: web.Request) -> web.Response:
        payload = await self._arrive("tavily", request)
        if request.headers.get("Authorization") != f"Bearer {self.keys['tavily']}":
            detail = {"error": "Unauthorized: missing or invalid API key."}
            return web.json_response({"detail": detail}, status=401)
        failure = self._failure()
        if failure is not None:
            return failure
        found = self.corpus(payload["query"])[: int(payload.get("max_results", 5))]
        return web.json_response(
            {
                "query": payload["query"],
                "follow_up_questions": None,
                "answer": None,
                "images": [],
                "results": [
                    {**hit, "score": round(0.9 - n / 100, 3), "raw_content": None}
                    for n, hit in enumerate(found)
                ],
                "response_time": 0.42,
                "request_id": str(uuid.uuid4()),
            }
        )

    async def _exa(self, request: web.Request) -> web.Response:
        payload = await self._arrive("exa", request)
        if request.headers.get("x-api-key") != self.keys["exa"]:
            return web.json_response(
                {
                    "requestId": uuid.uuid4().hex,
                    "error": "Invalid API key",
                    "tag": "INVALID_API_KEY",
                },
                status=401,
            )
        failure = self._failure()
        if failure is not None:
            return failure
        found = self.corpus(payload["query"])[: int(payload.get("numResults", 10))]
        wants_highlights = "highlights" in payload.get("contents", {})
        results = []
        for hit in found:
            result: dict[str, Any] = {
                "id": hit["url"],
                "title": hit["title"],
                "url": hit["url"],
                "publishedDate": "2026-01-05T00:00:00.000Z",
                "author": None,
            }
            if wants_highlights:
                result["highlights"] = [hit["content"][:400]]
                result["highlightScores"] = [0.5]
            results.append(result)
        return web.json_response(
            {
                "requestId": uuid.uuid4().hex,
                "resolvedSearchType": "neural",
                "results": results,
                "costDollars": {"total": 0.005},
            }
        )

    async def _searxng(self, request: web.Request) -> web.Response:
        payload = await self._arrive("searxng", request)
        key = self.keys["searxng"]
        if key is not None and request.headers.get("Authorization") != f"Bearer {key}":
            return web.Response(status=401, text="401 Unauthorized")
        if payload.get("format") != "json":  # what an instance without JSON enabled answers
            return web.Response(status=403, text="403 Forbidden")
        failure = self._failure()
        if failure is not None:
            return failure
        found = self.corpus(payload["q"])
        return web.json_response(
            {
                "query": payload["q"],
                "number_of_results": 0,
                "results": [
                    {
                        **hit,
                        "engine": "duckduckgo",
                        "engines": ["duckduckgo"],
                        "score": 1.0,
                        "category": "general",
                        "positions": [n],
                    }
                    for n, hit in enumerate(found, 1)
                ],
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [],
                "unresponsive_engines": [],
            }
        )


class FakeUpstream(FakeServer):
    """An arbitrary web API for the `http` tool: echoes, redirects, big, slow and odd bodies.

    `requests` records (method, path with query, headers, body) of everything that arrived,
    so a test can prove a refused request never left the process.
    """

    runner_options: ClassVar[dict[str, Any]] = {"handler_cancellation": True}

    def __init__(self) -> None:
        # Headers stay case-insensitive, as HTTP has them.
        self.requests: list[tuple[str, str, CIMultiDict[str], bytes]] = []
        self.root = ""

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        return app

    def _started(self) -> None:
        self.root = self.origin

    def paths(self) -> list[str]:
        return [path for _, path, _, _ in self.requests]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append((request.method, request.path_qs, request.headers.copy(), body))
        name = request.path.rsplit("/", 1)[-1]  # so a preset's base path may come first
        if name == "echo":
            return web.json_response(
                {
                    "method": request.method,
                    "path": request.path_qs,
                    "headers": dict(request.headers),
                    "body": body.decode(errors="replace"),
                }
            )
        if name == "redirect":
            status = int(request.query.get("status", "302"))
            return web.Response(status=status, headers={"Location": request.query["to"]})
        if name == "loop":
            return web.Response(status=302, headers={"Location": "/loop"})
        if name == "big":
            return web.Response(text="x" * 300_000, content_type="text/plain")
        if name == "endless":
            response = web.StreamResponse(headers={"Content-Type": "text/plain"})
            await response.prepare(request)
            for _ in range(100_000):  # far more than any cap; the client stops reading
                await response.write(b"y" * 1024)
            return response
        if name == "slow":
            await asyncio.sleep(10)
            return web.Response(text="too late")
        if name == "png":
            return web.Response(
                body=b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", content_type="image/png"
            )
        if name == "deep-json":  # JSON nested deeper than Python's stack
            return web.Response(text="[" * 100_000, content_type="application/json")
        if name == "nested":  # a hostile page: `depth` <header> tags, one inside the other
            depth = int(request.query.get("depth", "12000"))
            page = "<html><body>" + "<header>" * depth + "x" + "</header>" * depth
            return web.Response(text=page + "</body></html>", content_type="text/html")
        if name.endswith(".html"):  # a saved web page (tests/fixtures/pages/)
            page = Path(__file__).parent.parent / "fixtures" / "pages" / name
            return web.Response(body=page.read_bytes(), content_type="text/html", charset="utf-8")
        if name == "missing":
            return web.json_response({"message": "Not Found"}, status=404)
        return web.json_response({"hello": "world", "path": request.path_qs, "list": [1, 2]})
