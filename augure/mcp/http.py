"""The HTTP client of a streamable HTTP server, with each answer bounded as it arrives: the
SDK reads a JSON answer whole (`aread`), so the bound is on the body stream beneath it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2

from augure.common.errors import NotDone
from augure.mcp.limits import MESSAGE_LIMIT, too_large

# The SDK's own client defaults (30 s a request, 5 min between events of a stream), held here:
# the SDK keeps them in a private module, which may move in any release.
TIMEOUT_SECONDS = 30.0
EVENT_STREAM_READ_SECONDS = 300.0


# A StreamError too: that is what the SDK turns into an error answer to the request.
class AnswerTooLarge(NotDone, httpx2.StreamError):
    """A `StreamError`: the SDK answers the request with an error quoting it."""


class BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self.inner, self.limit = inner, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        received = 0
        async for chunk in self.inner:
            received += len(chunk)
            if received > self.limit:
                raise AnswerTooLarge(too_large())
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


async def bounded(response: httpx2.Response, limit: int = MESSAGE_LIMIT) -> None:
    """A response hook: each body over `limit` bytes fails while read. An event stream is
    left whole: it may stay open for the session, and the SDK bounds each of its events
    (`max_sse_event_size`). A hook runs before the body is read, on the client's own
    transports, so the proxy variables (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`) still apply."""
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != "text/event-stream":
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = BoundedStream(response.stream, limit)


def http_client(headers: dict[str, str]) -> httpx2.AsyncClient:
    """As the SDK's `create_mcp_http_client`, with each answer bounded as it arrives."""
    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(TIMEOUT_SECONDS, read=EVENT_STREAM_READ_SECONDS),
        event_hooks={"response": [bounded]},
    )
