"""The Application python-telegram-bot runs for the Telegram channel: its HTTP pools, its
long-polling bot and the class that settles each update (augure.channels.telegram.polling)."""

from __future__ import annotations

from typing import Any

import httpx
from telegram.ext import Application, ApplicationBuilder, Defaults
from telegram.request import HTTPXRequest

from augure.channels.telegram.polling import PollingBot, SettlingApplication
from augure.channels.telegram.showing import NO_PREVIEW
from augure.common.keepalive import keep_client_sockets, tls_context
from augure.config.settings import Config


def build_application(config: Config, token: str) -> Application[Any, Any, Any, Any, Any, Any]:
    root = config.telegram.api_url.rstrip("/")

    def request(connections: int) -> HTTPXRequest:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        # One SSL context for every pool (the CA bundle read once). The proxy, when set, is
        # used as given; unset, httpx applies HTTPS_PROXY / ALL_PROXY / NO_PROXY itself.
        return _KeptSocketsRequest(
            connection_pool_size=connections,
            proxy=config.telegram.proxy,
            httpx_kwargs={"verify": tls_context(), "limits": limits},
        )

    bot = PollingBot(
        token,
        base_url=f"{root}/bot",
        base_file_url=f"{root}/file/bot",
        # What ApplicationBuilder would give: many connections for replies, one for polls.
        request=request(256),
        get_updates_request=request(1),
        # No message the bot sends asks Telegram for a link preview unless it says so: a
        # preview is a request Telegram's servers make to the link (augure.channels.telegram
        # .showing decides the one exception).
        defaults=Defaults(link_preview_options=NO_PREVIEW),
    )
    return (
        ApplicationBuilder()
        .application_class(SettlingApplication)
        .bot(bot)
        # A turn may wait on an approval button; that press arrives as another update,
        # so updates must not be processed one at a time. Per-chat order is kept by the
        # agent's per-chat lock.
        .concurrent_updates(True)
        # PTB builds its own APScheduler JobQueue whenever APScheduler is installed (it is
        # ours): jobs run on Augure's scheduler, so no second one is started beside it.
        .job_queue(None)
        .build()
    )


class _KeptSocketsRequest(HTTPXRequest):
    """PTB's request, except that its pools' idle checks stay cheap (augure.common.keepalive),
    proxied pools included. PTB builds its client again on an initialize after a shutdown,
    so the pools are wrapped where it is built."""

    def _build_client(self) -> httpx.AsyncClient:
        return keep_client_sockets(super()._build_client())
