"""A strict fake of the Telegram Bot API, served by aiohttp on 127.0.0.1.

Point the real python-telegram-bot client at it::

    async with FakeTelegram() as tg:
        app = (
            ApplicationBuilder().token(tg.token)
            .base_url(f"{tg.root}/bot").base_file_url(f"{tg.root}/file/bot").build()
        )
        tg.inject_message(42, "/start")
        await tg.wait_for("sendMessage")

Errors use the descriptions real Telegram sends. Requests may be GET (query string) or POST
(JSON, urlencoded or multipart form); form values are JSON-decoded except for free-text fields.
Method names are case-insensitive, as on Telegram. Like Telegram, the fake trims whitespace
around texts, drops an inline keyboard when editMessageText is sent without one, answers an
older pending getUpdates with 409 Conflict when a newer one arrives, and only lets
``press_button`` press a button the message currently has. File downloads are recorded in
``calls`` with method ``"file"``. ``wait_for`` returns every matching successful call so far
(or, with ``failed=True``, every failed one). Group chats have negative ids; texts and captions
carry the entities Telegram computes (a leading bot command, @mentions), and
``tests.fakes.telegram_messages`` builds the other message kinds. ``outage()`` takes the API
down (an HTML 502 from a proxy, or refused connections) until ``recover()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import mimetypes
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aiohttp import web

from tests.fakes import telegram_messages, telegram_previews
from tests.fakes.audio import is_ogg_opus
from tests.fakes.server import FakeServer
from tests.fakes.telegram_html import ContentError, check_reply_markup, format_text, utf16_len

JSON = dict[str, Any]
Handler = Callable[[JSON], Awaitable[Any]]

# Form fields that are free text and must never be JSON-decoded ("123" stays a string).
_STRING_FIELDS = {
    "text", "caption", "parse_mode", "callback_query_id", "action", "file_id", "url",
    "description", "language_code", "inline_message_id", "photo", "document", "file_name",
    "business_connection_id", "message_effect_id", "short_description", "name",
}  # fmt: skip
_CHAT_ACTIONS = {
    "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice",
    "upload_document", "choose_sticker", "find_location", "record_video_note",
    "upload_video_note",
}  # fmt: skip
_DEFAULT_UPDATES = {
    "message", "edited_message", "channel_post", "edited_channel_post", "callback_query",
    "inline_query", "chosen_inline_result", "my_chat_member", "business_connection",
    "business_message", "edited_business_message", "deleted_business_messages",
    "shipping_query", "pre_checkout_query", "purchased_paid_media", "poll", "poll_answer",
    "chat_join_request", "chat_boost", "removed_chat_boost",
}  # fmt: skip
_STATUS_TEXT = {
    400: "Bad Request", 401: "Unauthorized", 403: "Forbidden: bot was blocked by the user",
    404: "Not Found", 409: "Conflict: terminated by other getUpdates request; make sure that "
    "only one bot instance is running", 500: "Internal Server Error", 502: "Bad Gateway",
}  # fmt: skip
_IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"BM", b"RIFF")
_COMMAND_RE = re.compile(r"[a-z0-9_]{1,32}")
NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of a message"
)


_BAD_GATEWAY_PAGE = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)


class _Outage(Exception):
    """Raised inside a request while the fake plays an outage."""


@dataclass
class ApiCall:
    method: str
    params: JSON
    status: int
    response: JSON
    at: float  # time.monotonic() when the request arrived


@dataclass
class Preview:
    """An address Telegram's servers would fetch to preview a message the bot sent."""

    chat_id: int
    message_id: int
    url: str


@dataclass
class UploadedFile:
    """A multipart file part, as it appears in ``ApiCall.params``."""

    filename: str
    content_type: str
    data: bytes


class ApiError(Exception):
    def __init__(self, description: str, status: int = 400, parameters: JSON | None = None):
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters

    def body(self) -> JSON:
        body: JSON = {"ok": False, "error_code": self.status, "description": self.description}
        if self.parameters:
            body["parameters"] = self.parameters
        return body


@dataclass
class _Stored:
    message: JSON
    from_bot: bool
    raw_text: str | None = None
    parse_mode: str | None = None
    reply_markup: JSON | None = None
    edits: int = 0
    media: JSON = field(default_factory=dict)


@dataclass
class _File:
    file_id: str
    unique_id: str
    path: str
    data: bytes


def _coerce(key: str, value: Any) -> Any:
    if isinstance(value, str) and key not in _STRING_FIELDS:
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _image_size(data: bytes) -> tuple[int, int]:
    if data.startswith(b"\x89PNG") and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return 800, 600


class FakeTelegram(FakeServer):
    runner_options: ClassVar[dict[str, Any]] = {"shutdown_timeout": 1.0}

    def __init__(
        self,
        token: str = "123456:TEST-TOKEN",
        bot_id: int = 123456,
        bot_username: str = "augure_test_bot",
    ) -> None:
        self.token = token
        self.bot_user: JSON = {"id": bot_id, "is_bot": True, "first_name": "Augure Test"}
        self.bot_user["username"] = bot_username
        self.calls: list[ApiCall] = []
        self.commands: list[JSON] = []
        self.callback_answers: list[JSON] = []
        self.previews: list[Preview] = []  # what Telegram would fetch, unasked, to preview
        self.polls_started: list[float] = []  # arrival of each getUpdates, before it answers
        self.poll_offsets: list[int | None] = []  # the offset each getUpdates confirmed with
        # Once a poll has answered with updates, the polls after it are held unanswered (until
        # the server stops): the bot can no longer confirm what it was given.
        self.hold_after_delivery = False
        # Seconds each file download waits before it answers (a large photo, a slow link).
        self.download_delay = 0.0
        self._chats: dict[int, JSON] = {}
        self._messages: dict[int, dict[int, _Stored]] = {}
        self._last_message_id: dict[int, int] = {}
        self._files: dict[str, _File] = {}
        self._updates: list[JSON] = []
        self._next_update_id = 1
        self._allowed_updates = set(_DEFAULT_UPDATES)
        self._callbacks: dict[str, bool] = {}  # query id -> answered
        self._planned: dict[str, list[ApiError]] = {}
        self._poll_generation = 0
        self._changed = asyncio.Event()
        self._inflight = 0
        self._last_activity = time.monotonic()
        self._closing = False
        self._outage: str | None = None  # "502" or "refuse" while the API is down
        self._holding = False
        self._handlers: dict[str, tuple[str, Handler]] = {}
        for name in (
            "getMe", "deleteWebhook", "getWebhookInfo", "setMyCommands", "getMyCommands",
            "deleteMyCommands", "getUpdates", "sendMessage", "editMessageText",
            "editMessageReplyMarkup", "deleteMessage", "answerCallbackQuery", "sendChatAction",
            "sendPhoto", "sendDocument", "sendVoice", "getFile", "close", "logOut",
        ):  # fmt: skip
            self._handlers[name.lower()] = (name, getattr(self, f"_api_{name}"))

    # ----------------------------------------------------------------- lifecycle
    def build_app(self) -> web.Application:
        self._closing = False
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle_api)
        app.router.add_route("GET", "/file/bot{token}/{path:.+}", self._handle_file)
        return app

    def _stopping(self) -> None:
        self._closing = True
        self._notify()

    @property
    def root(self) -> str:
        return self.origin

    # ----------------------------------------------------------------- outages
    async def outage(self, mode: str = "502") -> None:
        """The Bot API goes down: ``"502"`` answers everything with a proxy's HTML 502 page,
        ``"refuse"`` stops listening and drops open connections. Pending getUpdates fail too."""
        if mode not in ("502", "refuse"):
            raise ValueError(f"unknown outage mode {mode!r}")
        self._outage = mode
        self._notify()
        if mode == "refuse":
            await self.unlisten()
        else:
            await self.listen()

    async def recover(self) -> None:
        """The Bot API is back, on the same address, with its state (updates, messages)."""
        self._outage = None
        await self.listen()
        self._notify()

    def _outage_response(self, request: web.Request) -> web.Response:
        if self._outage == "refuse" and request.transport is not None:
            request.transport.abort()  # a kept-alive connection dies like a refused one
        return web.Response(status=502, text=_BAD_GATEWAY_PAGE, content_type="text/html")

    # ----------------------------------------------------------------- test-side API
    def inject_message(
        self,
        user_id: int,
        text: str | None = None,
        *,
        chat_id: int | None = None,
        chat_type: str | None = None,
        first_name: str = "Owner",
        photo: bytes | None = None,
        document: tuple[str, bytes] | None = None,
        voice: bytes | None = None,
        caption: str | None = None,
        content: JSON | None = None,
        entities: list[JSON] | None = None,
        reply_to: int | None = None,
    ) -> JSON:
        """A user's message. Negative chat ids are groups (``chat_type`` may say supergroup);
        ``content`` is a message kind from ``telegram_messages`` (location, sticker...);
        ``entities`` adds to the bot commands and @mentions found in the text (e.g. a
        text_mention); ``reply_to`` quotes an earlier message of the chat."""
        if not text and photo is None and document is None and voice is None and not content:
            raise ValueError("inject_message needs text, photo, document, voice or content")
        cid = user_id if chat_id is None else chat_id
        if chat_type is None:
            chat_type = "private" if cid > 0 else "group"
        if (chat_type == "private") != (cid > 0):
            raise ValueError("private chats have the user's positive id, groups negative ids")
        chat: JSON = {"id": cid, "type": chat_type, "first_name": first_name}
        if chat_type != "private":
            chat = {"id": cid, "type": chat_type, "title": "Test group"}
        self._chats.setdefault(cid, chat)
        user = {"id": user_id, "is_bot": False, "first_name": first_name}
        message = self._new_message(cid, user)
        if reply_to is not None:
            replied = self._messages.get(cid, {}).get(reply_to)
            if replied is None:
                raise LookupError(f"no message {reply_to} in chat {cid} to reply to")
            quoted = {k: v for k, v in replied.message.items() if k != "reply_to_message"}
            message["reply_to_message"] = copy.deepcopy(quoted)
        if text is not None:
            message["text"] = text
            if marked := telegram_messages.entities(text, entities):
                message["entities"] = marked
        if photo is not None:
            message["photo"] = self._photo_sizes(photo)
        if document is not None:
            message["document"] = self._document(*document)
        if voice is not None:
            file = self._add_file(voice, "voice", ".oga")
            message["voice"] = {"file_id": file.file_id, "file_unique_id": file.unique_id,
                                "duration": 2, "mime_type": "audio/ogg",
                                "file_size": len(voice)}  # fmt: skip
        if caption is not None and (photo is not None or document is not None):
            message["caption"] = caption
            if marked := telegram_messages.entities(caption, entities):
                message["caption_entities"] = marked
        message.update(copy.deepcopy(content or {}))
        self._store(cid, _Stored(message, from_bot=False, raw_text=text))
        self._push_update({"message": message})
        return copy.deepcopy(message)

    def inject_album(
        self,
        user_id: int,
        parts: list[bytes | tuple[str, bytes]],
        *,
        caption: str | None = None,
        chat_id: int | None = None,
    ) -> list[JSON]:
        """An album as Telegram sends it: one message and one update per part, all sharing a
        ``media_group_id``, the caption on the first part only. A part is a photo's bytes or
        a document's (name, bytes); Telegram does not mix documents with photos."""
        if not 2 <= len(parts) <= 10 or len({isinstance(part, bytes) for part in parts}) != 1:
            raise ValueError("an album is 2-10 photos, or 2-10 documents")
        group = {"media_group_id": telegram_messages.media_group_id()}
        sent = []
        for index, part in enumerate(parts):
            said = caption if index == 0 else None
            if isinstance(part, bytes):
                message = self.inject_message(
                    user_id, chat_id=chat_id, photo=part, caption=said, content=group
                )
            else:
                message = self.inject_message(
                    user_id, chat_id=chat_id, document=part, caption=said, content=group
                )
            sent.append(message)
        return sent

    def press_button(
        self,
        user_id: int,
        message_id: int,
        data: str,
        *,
        chat_id: int | None = None,
        forged: bool = False,
    ) -> str:
        """A press on one of a bot message's buttons. ``forged`` sends ``data`` whether or not
        the message holds such a button: the Bot API warns that a modified client can."""
        cid = user_id if chat_id is None else chat_id
        stored = self._messages.get(cid, {}).get(message_id)
        if stored is None or not stored.from_bot:
            raise LookupError(f"no bot message {message_id} in chat {cid}")
        rows = (stored.message.get("reply_markup") or {}).get("inline_keyboard", [])
        if not forged and data not in [b.get("callback_data") for row in rows for b in row]:
            raise LookupError(f"message {message_id} has no button with callback_data {data!r}")
        query_id = str(4_000_000_000_000 + len(self._callbacks) + 1)
        self._callbacks[query_id] = False
        user = {"id": user_id, "is_bot": False, "first_name": "Owner"}
        if "first_name" in self._chats.get(cid, {}):
            user["first_name"] = self._chats[cid]["first_name"]
        query = {"id": query_id, "from": user, "message": copy.deepcopy(stored.message)}
        query.update(chat_instance=str(cid * 7 + 3), data=data)
        self._push_update({"callback_query": query})
        return query_id

    def plan_error(
        self,
        method: str,
        status: int = 429,
        *,
        retry_after: int = 1,
        count: int = 1,
        description: str | None = None,
    ) -> None:
        params = None
        if status == 429:
            description = description or f"Too Many Requests: retry after {retry_after}"
            params = {"retry_after": retry_after}
        elif description is None:
            description = _STATUS_TEXT.get(status, "Internal Server Error")
        elif status == 400 and not description.startswith("Bad Request"):
            description = f"Bad Request: {description}"
        errors = self._planned.setdefault(method.lower(), [])
        errors.extend(ApiError(description, status, params) for _ in range(count))

    def release_polls(self) -> None:
        """The polls held by `hold_after_delivery` answer (empty), and polls are no longer held."""
        self.hold_after_delivery = self._holding = False
        self._notify()

    def messages(self, chat_id: int) -> list[JSON]:
        result = []
        for message_id in sorted(self._messages.get(chat_id, {})):
            stored = self._messages[chat_id][message_id]
            if stored.from_bot:
                item = copy.deepcopy(stored.message)
                item.update(raw_text=stored.raw_text, parse_mode=stored.parse_mode)
                item.update(reply_markup=stored.reply_markup, edits=stored.edits, **stored.media)
                result.append(item)
        return result

    def sent(self, method: str | None = None) -> list[ApiCall]:
        return [c for c in self.calls if c.status == 200 and method in (None, c.method)]

    async def wait_for(
        self,
        predicate: Callable[[ApiCall], bool] | str,
        *,
        timeout: float = 5.0,
        count: int = 1,
        failed: bool = False,
    ) -> list[ApiCall]:
        """Successful calls matching ``predicate``; with ``failed``, failed ones instead."""

        def match(call: ApiCall) -> bool:
            if (call.status == 200) == failed:
                return False
            if isinstance(predicate, str):
                return call.method == predicate
            return predicate(call)

        deadline = time.monotonic() + timeout
        while True:
            changed = self._changed
            matched = [c for c in self.calls if match(c)]
            if len(matched) >= count:
                return matched
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"waited {timeout}s for {count} successful call(s) matching {predicate!r}, "
                    f"saw {len(matched)}; calls so far:\n{self._summary()}"
                )
            await self._wait(changed, left)

    async def wait_polling(self, timeout: float = 5.0) -> float:
        """Wait until the bot has a getUpdates request out; its arrival time (monotonic)."""
        deadline = time.monotonic() + timeout
        while not self.polls_started:
            changed = self._changed
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no getUpdates within {timeout}s; calls: {self._summary()}")
            await self._wait(changed, remaining)
        return self.polls_started[0]

    async def wait_idle(self, quiet: float = 0.3, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            changed, now = self._changed, time.monotonic()
            quiet_for = now - self._last_activity if self._inflight == 0 else 0.0
            if quiet_for >= quiet:
                return
            if now >= deadline:
                raise TimeoutError(
                    f"no {quiet}s quiet period within {timeout}s:\n{self._summary()}"
                )
            await self._wait(changed, min(quiet - quiet_for, deadline - now))

    # ----------------------------------------------------------------- plumbing
    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    @staticmethod
    async def _wait(event: asyncio.Event, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), max(timeout, 0.0))

    def _summary(self) -> str:
        polls = sum(1 for c in self.calls if c.method == "getUpdates")
        lines = [f"  ({polls} getUpdates calls)"]
        for c in self.calls:
            if c.method != "getUpdates":
                params = {k: v for k, v in c.params.items() if not isinstance(v, UploadedFile)}
                detail = c.response.get("description", "")
                lines.append(f"  {c.status} {c.method} {json.dumps(params)[:200]} {detail}")
        return "\n".join(lines[-40:])

    def _push_update(self, payload: JSON) -> None:
        self._updates.append({"update_id": self._next_update_id, **payload})
        self._next_update_id += 1
        self._last_activity = time.monotonic()
        self._notify()

    def _new_message(self, chat_id: int, sender: JSON) -> JSON:
        message_id = self._last_message_id.get(chat_id, 0) + 1
        self._last_message_id[chat_id] = message_id
        chat = self._chats[chat_id]
        return {"message_id": message_id, "from": sender, "chat": chat, "date": int(time.time())}

    def _store(self, chat_id: int, stored: _Stored) -> None:
        self._messages.setdefault(chat_id, {})[stored.message["message_id"]] = stored

    def _add_file(self, data: bytes, folder: str, ext: str) -> _File:
        n = len(self._files) + 1
        file = _File(f"FILE{n:06d}{folder.upper()}", f"U{n:06d}", f"{folder}/file_{n}{ext}", data)
        self._files[file.file_id] = file
        return file

    def _photo_sizes(self, data: bytes) -> list[JSON]:
        width, height = _image_size(data)
        sizes: list[JSON] = []
        for scale in (max(max(width, height) / 90, 1.0), 1.0):
            file = self._add_file(data, "photos", ".jpg")
            w, h = max(int(width / scale), 1), max(int(height / scale), 1)
            sizes.append({"file_id": file.file_id, "file_unique_id": file.unique_id})
            sizes[-1].update(width=w, height=h, file_size=len(data))
        return sizes

    def _document(self, name: str, data: bytes) -> JSON:
        ext = "." + name.rsplit(".", 1)[1] if "." in name else ""
        file = self._add_file(data, "documents", ext)
        mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return {"file_name": name, "mime_type": mime, "file_id": file.file_id,
                "file_unique_id": file.unique_id, "file_size": len(data)}  # fmt: skip

    # ----------------------------------------------------------------- HTTP layer
    async def _read_params(self, request: web.Request) -> JSON:
        raw: JSON = dict(request.query)
        if request.content_type == "application/json":
            try:
                body = await request.json()
            except ValueError:
                raise ApiError("Bad Request: can't parse JSON encoded request") from None
            if not isinstance(body, dict):
                raise ApiError("Bad Request: can't parse JSON encoded request")
            raw.update(body)
        elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            for key, value in (await request.post()).items():
                if isinstance(value, web.FileField):
                    data = value.file.read()
                    raw[key] = UploadedFile(value.filename, value.content_type, data)
                else:
                    raw[key] = value
        return {key: _coerce(key, value) for key, value in raw.items()}

    async def _handle_api(self, request: web.Request) -> web.Response:
        arrived = time.monotonic()
        method = request.match_info["method"]
        entry = self._handlers.get(method.lower())
        name = entry[0] if entry else method
        active = name != "getUpdates"
        if not active:
            self.polls_started.append(arrived)
            self._notify()
        if active:
            self._inflight += 1
            self._last_activity = arrived
        params: JSON = {}
        try:
            if self._outage:
                raise _Outage
            if request.match_info["token"] != self.token:
                raise ApiError("Unauthorized", 401)
            if entry is None:
                raise ApiError("Not Found", 404)
            params = await self._read_params(request)
            planned = self._planned.get(name.lower())
            if planned:
                raise planned.pop(0)
            body: JSON = {"ok": True, "result": await entry[1](params)}
            status = 200
        except ApiError as err:
            body, status = err.body(), err.status
        except _Outage:
            self.calls.append(ApiCall(name, params, 502, {}, arrived))
            self._notify()
            return self._outage_response(request)
        except Exception as exc:  # a bug in the fake: make it visible in calls and to the client
            body = {"ok": False, "error_code": 500, "description": f"Fake crashed: {exc!r}"}
            status = 500
        finally:
            if active:
                self._inflight -= 1
                self._last_activity = time.monotonic()
        body = copy.deepcopy(body)  # a snapshot: stored messages change later
        self.calls.append(ApiCall(name, params, status, body, arrived))
        self._notify()
        return web.json_response(body, status=status)

    async def _handle_file(self, request: web.Request) -> web.Response:
        if self._outage:
            return self._outage_response(request)
        path = request.match_info["path"]
        deadline = time.monotonic() + self.download_delay
        while not self._closing and time.monotonic() < deadline:
            await self._wait(self._changed, deadline - time.monotonic())
        file = next((f for f in self._files.values() if f.path == path), None)
        if request.match_info["token"] != self.token:
            error = ApiError("Unauthorized", 401)
        elif file is None:
            error = ApiError("Not Found", 404)
        else:
            body = {"ok": True, "file_path": path, "size": len(file.data)}
            self.calls.append(ApiCall("file", {"file_path": path}, 200, body, time.monotonic()))
            self._last_activity = time.monotonic()
            self._notify()
            return web.Response(body=file.data, content_type="application/octet-stream")
        call = ApiCall("file", {"file_path": path}, error.status, error.body(), time.monotonic())
        self.calls.append(call)
        self._notify()
        return web.json_response(error.body(), status=error.status)

    # ----------------------------------------------------------------- validation helpers
    def _chat(self, params: JSON) -> int:
        chat_id = params.get("chat_id")
        if chat_id in (None, ""):
            raise ApiError("Bad Request: chat_id is empty")
        if isinstance(chat_id, bool) or not isinstance(chat_id, int) or chat_id not in self._chats:
            raise ApiError("Bad Request: chat not found")
        return chat_id

    def _find(self, params: JSON, what: str) -> tuple[int, _Stored]:
        chat_id = self._chat(params)
        message_id = params.get("message_id")
        if not isinstance(message_id, int) or isinstance(message_id, bool):
            raise ApiError("Bad Request: message identifier is not specified")
        stored = self._messages.get(chat_id, {}).get(message_id)
        if stored is None:
            raise ApiError(f"Bad Request: message to {what} not found")
        if what == "edit" and not stored.from_bot:
            raise ApiError("Bad Request: message can't be edited")
        return chat_id, stored

    def _format(self, params: JSON, key: str, entities_key: str) -> tuple[str, list[JSON]]:
        parse_mode, entities = params.get("parse_mode"), params.get(entities_key)
        try:
            return format_text(params.get(key), parse_mode, entities)
        except ContentError as err:
            raise ApiError(str(err)) from None

    def _preview_options(self, params: JSON) -> JSON | None:
        try:
            return telegram_previews.options(params)
        except telegram_previews.PreviewError as err:
            raise ApiError(str(err)) from None

    def _previewed(self, message: JSON, entities: list[JSON], chosen: JSON | None) -> None:
        """Record the preview Telegram would fetch; like Telegram, the message keeps the
        options it was sent with."""
        message.pop("link_preview_options", None)
        if chosen is not None:
            message["link_preview_options"] = chosen
        url = telegram_previews.fetched(message["text"], entities, chosen)
        if url is not None:
            chat_id = message["chat"]["id"]
            self.previews.append(Preview(chat_id, message["message_id"], url))

    def _markup(self, params: JSON) -> JSON | None:
        try:
            return check_reply_markup(params.get("reply_markup"))
        except ContentError as err:
            raise ApiError(str(err)) from None

    def _send(
        self, params: JSON, content: Callable[[], JSON], raw: str | None, **media: Any
    ) -> JSON:
        """Validates markup and reply target, then stores a new bot message built by content."""
        chat_id = self._chat(params)
        markup = self._markup(params)
        reply_to = params.get("reply_to_message_id")
        reply_params = params.get("reply_parameters")
        if isinstance(reply_params, dict):
            reply_to = reply_params.get("message_id")
        replied = self._messages.get(chat_id, {}).get(reply_to) if reply_to else None
        if reply_to and replied is None:
            allow = params.get("allow_sending_without_reply") or (
                isinstance(reply_params, dict) and reply_params.get("allow_sending_without_reply")
            )
            if not allow:
                raise ApiError("Bad Request: message to be replied not found")
        message = self._new_message(chat_id, self.bot_user) | content()
        if replied is not None:
            quoted = {k: v for k, v in replied.message.items() if k != "reply_to_message"}
            message["reply_to_message"] = copy.deepcopy(quoted)
        if markup and "inline_keyboard" in markup:
            message["reply_markup"] = markup
        mode = params.get("parse_mode")
        self._store(chat_id, _Stored(message, True, raw, mode, markup, media=media))
        return message

    def _caption(self, params: JSON) -> JSON:
        text, entities = self._format(params, "caption", "caption_entities")
        if utf16_len(text) > 1024:
            raise ApiError("Bad Request: message caption is too long")
        content: JSON = {"caption": text} if text else {}
        if entities:
            content["caption_entities"] = entities
        return content

    def _upload(self, params: JSON, key: str) -> tuple[bytes, str]:
        value = params.get(key)
        if isinstance(value, UploadedFile):
            if not value.data:
                raise ApiError("Bad Request: file must be non-empty")
            return value.data, value.filename
        if isinstance(value, str) and value:
            if value not in self._files:
                raise ApiError("Bad Request: wrong file identifier/HTTP URL specified")
            return self._files[value].data, self._files[value].path.rsplit("/", 1)[-1]
        raise ApiError(f"Bad Request: there is no {key} in the request")

    # ----------------------------------------------------------------- API methods
    async def _api_getMe(self, params: JSON) -> JSON:
        return self.bot_user | {
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    async def _api_deleteWebhook(self, params: JSON) -> bool:
        if params.get("drop_pending_updates"):
            self._updates.clear()
        return True

    async def _api_getWebhookInfo(self, params: JSON) -> JSON:
        count = len(self._updates)
        return {"url": "", "has_custom_certificate": False, "pending_update_count": count}

    async def _api_setMyCommands(self, params: JSON) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list) or not all(isinstance(c, dict) for c in commands):
            raise ApiError("Bad Request: can't parse commands JSON object")
        if len(commands) > 100:
            raise ApiError("Bad Request: BOT_COMMANDS_TOO_MUCH")
        for command in commands:
            name, description = command.get("command"), command.get("description")
            if not isinstance(name, str) or not _COMMAND_RE.fullmatch(name):
                raise ApiError("Bad Request: BOT_COMMAND_INVALID")
            if not isinstance(description, str) or not 1 <= len(description.strip()) <= 256:
                raise ApiError("Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        self.commands = [
            {"command": c["command"], "description": c["description"]} for c in commands
        ]
        return True

    async def _api_getMyCommands(self, params: JSON) -> list[JSON]:
        return [dict(c) for c in self.commands]

    async def _api_deleteMyCommands(self, params: JSON) -> bool:
        self.commands = []
        return True

    async def _api_getUpdates(self, params: JSON) -> list[JSON]:
        self._poll_generation += 1
        generation = self._poll_generation
        self._notify()  # an older pending getUpdates is terminated with 409 Conflict
        offset, limit, timeout = params.get("offset"), params.get("limit"), params.get("timeout")
        self.poll_offsets.append(offset if isinstance(offset, int) else None)
        if self._holding:
            while self._holding and not self._closing:
                await self._wait(self._changed, 1.0)
            return []
        limit = limit if isinstance(limit, int) and 1 <= limit <= 100 else 100
        timeout = timeout if isinstance(timeout, int | float) else 0
        allowed = params.get("allowed_updates")
        if isinstance(allowed, list):
            self._allowed_updates = set(allowed) or set(_DEFAULT_UPDATES)
        if isinstance(offset, int) and offset > 0:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        elif isinstance(offset, int) and offset < 0:
            self._updates = self._updates[offset:]
        deadline = time.monotonic() + min(max(float(timeout), 0.0), 50.0)
        while True:
            changed = self._changed
            if generation != self._poll_generation:
                raise ApiError(_STATUS_TEXT[409], 409)
            if self._outage:
                raise _Outage
            self._updates = [u for u in self._updates if set(u) & self._allowed_updates]
            batch = self._updates[:limit]
            if batch or self._closing or time.monotonic() >= deadline:
                self._holding = self.hold_after_delivery and bool(batch)
                return copy.deepcopy(batch)
            await self._wait(changed, deadline - time.monotonic())

    async def _api_sendMessage(self, params: JSON) -> JSON:
        self._chat(params)
        text, entities = self._format(params, "text", "entities")
        if not text:
            raise ApiError("Bad Request: message text is empty")
        if utf16_len(text) > 4096:
            raise ApiError("Bad Request: message is too long")
        chosen = self._preview_options(params)
        content: JSON = {"text": text, **({"entities": entities} if entities else {})}
        message = self._send(params, lambda: content, params.get("text"))
        self._previewed(message, entities, chosen)
        return message

    async def _api_editMessageText(self, params: JSON) -> JSON:
        _, stored = self._find(params, "edit")
        if "text" not in stored.message:
            raise ApiError("Bad Request: there is no text in the message to edit")
        text, entities = self._format(params, "text", "entities")
        if not text:
            raise ApiError("Bad Request: message text is empty")
        if utf16_len(text) > 4096:
            raise ApiError("Bad Request: message is too long")
        markup = self._markup(params)
        chosen = self._preview_options(params)
        message = stored.message
        new_markup = markup if markup and "inline_keyboard" in markup else None
        old = (message["text"], message.get("entities", []), message.get("reply_markup"))
        if old == (text, entities, new_markup):
            raise ApiError(NOT_MODIFIED)
        message.pop("entities", None)
        message.pop("reply_markup", None)
        message.update(text=text, edit_date=int(time.time()))
        if entities:
            message["entities"] = entities
        if new_markup:
            message["reply_markup"] = new_markup
        stored.raw_text, stored.parse_mode = params.get("text"), params.get("parse_mode")
        stored.reply_markup, stored.edits = markup, stored.edits + 1
        self._previewed(message, entities, chosen)
        return message

    async def _api_editMessageReplyMarkup(self, params: JSON) -> JSON:
        _, stored = self._find(params, "edit")
        markup = self._markup(params)
        new_markup = markup if markup and "inline_keyboard" in markup else None
        if stored.message.get("reply_markup") == new_markup:
            raise ApiError(NOT_MODIFIED)
        stored.message.pop("reply_markup", None)
        if new_markup:
            stored.message["reply_markup"] = new_markup
        stored.message["edit_date"] = int(time.time())
        stored.reply_markup, stored.edits = markup, stored.edits + 1
        return stored.message

    async def _api_deleteMessage(self, params: JSON) -> bool:
        chat_id, stored = self._find(params, "delete")
        del self._messages[chat_id][stored.message["message_id"]]
        return True

    async def _api_answerCallbackQuery(self, params: JSON) -> bool:
        query_id = str(params.get("callback_query_id", ""))
        if self._callbacks.get(query_id) is not False:
            raise ApiError(
                "Bad Request: query is too old and response timeout expired or query ID is invalid"
            )
        self._callbacks[query_id] = True
        self.callback_answers.append(dict(params))
        return True

    async def _api_sendChatAction(self, params: JSON) -> bool:
        self._chat(params)
        if params.get("action") not in _CHAT_ACTIONS:
            raise ApiError("Bad Request: wrong parameter action in request")
        return True

    async def _api_sendPhoto(self, params: JSON) -> JSON:
        self._chat(params)
        data, _ = self._upload(params, "photo")
        if not data.startswith(_IMAGE_MAGIC):
            raise ApiError("Bad Request: IMAGE_PROCESS_FAILED")
        caption = self._caption(params)
        content = lambda: {"photo": self._photo_sizes(data), **caption}  # noqa: E731
        return self._send(params, content, params.get("caption"), photo_bytes=data)

    async def _api_sendDocument(self, params: JSON) -> JSON:
        self._chat(params)
        data, name = self._upload(params, "document")
        caption = self._caption(params)
        content = lambda: {"document": self._document(name, data), **caption}  # noqa: E731
        media = {"document_bytes": data, "document_name": name}
        return self._send(params, content, params.get("caption"), **media)

    async def _api_sendVoice(self, params: JSON) -> JSON:
        """Only an uploaded OGG/Opus file plays as a voice note, as Telegram documents."""
        self._chat(params)
        value = params.get("voice")
        if not isinstance(value, UploadedFile):
            raise ApiError("Bad Request: there is no voice in the request (multipart upload)")
        data = value.data
        if not is_ogg_opus(data):
            raise ApiError("Bad Request: VOICE_MESSAGE_INVALID: an OGG file encoded with OPUS")
        caption = self._caption(params)
        file = self._add_file(data, "voice", ".oga")
        voice = {"file_id": file.file_id, "file_unique_id": file.unique_id, "duration": 1,
                 "mime_type": "audio/ogg", "file_size": len(data)}  # fmt: skip
        content = lambda: {"voice": voice, **caption}  # noqa: E731
        return self._send(params, content, params.get("caption"), voice_bytes=data)

    async def _api_getFile(self, params: JSON) -> JSON:
        file = self._files.get(str(params.get("file_id", "")))
        if file is None:
            raise ApiError("Bad Request: invalid file_id")
        return {"file_id": file.file_id, "file_unique_id": file.unique_id,
                "file_size": len(file.data), "file_path": file.path}  # fmt: skip

    async def _api_close(self, params: JSON) -> bool:
        return True

    async def _api_logOut(self, params: JSON) -> bool:
        return True


if __name__ == "__main__":
    from tests.fakes.telegram_cli import main

    main()
