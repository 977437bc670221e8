"""Reading the mailbox over IMAP, in a worker thread on its own connection: folders opened
read-only and bodies fetched with BODY.PEEK, so reading never marks mail as seen; an HTML body
made readable in a budgeted child."""

from __future__ import annotations

import contextlib
import imaplib
import re
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage, Message
from email.parser import BytesHeaderParser, BytesParser
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

from augure.tools.email.settings import NETWORK_TIMEOUT, EmailConfig
from augure.tools.page_text import PageUnread, page_text
from augure.tools.readable import MAIL
from augure.tools.result import ToolResult

if TYPE_CHECKING:
    from imapclient import IMAPClient

# imapclient (the `email` extra) is imported on first use; its base error is imaplib's, so
# catching it needs no import of the library.
IMAPClientError = imaplib.IMAP4.error
BODY_LIMIT = 20_000
# The most time an HTML body's conversion may take, in its budgeted child process (as a
# web page's: augure/tools/page_text.py), well inside the tool's timeout.
HTML_SECONDS = 30.0


def policies() -> ModuleType:
    """`email.policy`, imported when mail is first read or sent: it loads the standard
    library's header parser, a cost at every start for a tool most turns never call."""
    from email import policy

    return policy


@contextlib.contextmanager
def connected(settings: EmailConfig) -> Iterator[IMAPClient]:
    from imapclient import IMAPClient

    security = settings.imap_security
    context = ssl.create_default_context()
    client = IMAPClient(
        settings.imap_host or "",
        port=settings.imap_port_or_default,
        ssl=security == "ssl",
        ssl_context=context if security == "ssl" else None,
        timeout=NETWORK_TIMEOUT,
    )
    try:
        if security == "starttls":
            client.starttls(context)
        password = settings.password.get_secret_value() if settings.password else ""
        client.login(settings.username or "", password)
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.logout()


def failure(settings: EmailConfig, exc: Exception) -> ToolResult:
    from imapclient.exceptions import LoginError

    where = f"{settings.imap_host}:{settings.imap_port_or_default}"
    if isinstance(exc, LoginError):
        return ToolResult.error(
            f"IMAP login to {where} failed for {settings.username}: check EMAIL_USERNAME and "
            f"EMAIL_PASSWORD ({_text(exc)})"
        )
    if isinstance(exc, IMAPClientError):
        return ToolResult.error(f"IMAP server {where} refused: {_text(exc)}")
    return ToolResult.error(f"cannot reach IMAP server {where}: {type(exc).__name__}: {exc}")


def _text(exc: Exception) -> str:
    return re.sub(r"^b'(.*)'$", r"\1", str(exc))


def list_messages(
    settings: EmailConfig, folder: str, criteria: list[Any], limit: int
) -> ToolResult:
    try:
        with connected(settings) as client:
            client.select_folder(folder, readonly=True)
            charset = (
                "UTF-8" if any(isinstance(c, str) and not c.isascii() for c in criteria) else None
            )
            uids = sorted(client.search(criteria or "ALL", charset), reverse=True)
            shown = uids[:limit]
            fields = b"BODY.PEEK[HEADER.FIELDS (FROM SUBJECT DATE)]"
            fetched = client.fetch(shown, [fields, b"FLAGS"]) if shown else {}
    except (IMAPClientError, OSError) as exc:
        return failure(settings, exc)
    what = "matching" if criteria else "in"
    if not uids:
        return ToolResult.ok(f"No messages {what} {folder}.")
    lines = [f"{len(uids)} messages {what} {folder}; showing {len(shown)}, newest first:"]
    for uid in shown:
        data = fetched.get(uid, {})
        raw = next((v for k, v in data.items() if k.startswith(b"BODY[HEADER")), b"")
        headers = BytesHeaderParser(policy=policies().default).parsebytes(raw)
        seen = "seen" if b"\\Seen" in data.get(b"FLAGS", ()) else "unseen"
        lines.append(
            f"uid {uid} [{seen}] {_date(headers)} | From: {_header(headers, 'From')} | "
            f"Subject: {_header(headers, 'Subject')}"
        )
    return ToolResult.ok("\n".join(lines))


@dataclass(frozen=True)
class Fetched:
    head: str  # uid, headers, attachments
    body: str
    html: bool  # the body is HTML, still to be converted


async def shown_message(fetched: Fetched) -> ToolResult:
    text = fetched.body
    if fetched.html:
        try:
            text, _ = await page_text(text, "", HTML_SECONDS, 2 * len(text) + 1000, mode=MAIL)
        except PageUnread as exc:
            text = f"[the HTML body was not converted: {exc}; stopped]"
    text = text.strip()
    if len(text) > BODY_LIMIT:
        text = text[:BODY_LIMIT] + f"\n[Body cut at {BODY_LIMIT:,} of {len(text):,} characters]"
    return ToolResult.ok(fetched.head + "\n\n" + text)


def read_message(settings: EmailConfig, folder: str, uid: int) -> ToolResult | Fetched:
    try:
        with connected(settings) as client:
            client.select_folder(folder, readonly=True)
            fetched = client.fetch([uid], [b"BODY.PEEK[]", b"FLAGS"]).get(uid)
    except (IMAPClientError, OSError) as exc:
        return failure(settings, exc)
    if not fetched or b"BODY[]" not in fetched:
        return ToolResult.error(f"no message with uid {uid} in {folder}")
    message = BytesParser(policy=policies().default).parsebytes(fetched[b"BODY[]"])
    seen = "seen" if b"\\Seen" in fetched.get(b"FLAGS", ()) else "unseen"
    lines = [f"UID: {uid} ({folder}, {seen})"]
    for name in ("From", "To", "Cc", "Date", "Subject"):
        if name in message:
            lines.append(f"{name}: {_header(message, name)}")
    attachments = [
        f"{part.get_filename() or 'unnamed'} ({part.get_content_type()})"
        for part in message.iter_attachments()
    ]
    if attachments:
        lines.append("Attachments: " + ", ".join(attachments))
    return Fetched("\n".join(lines), *_body_text(message))


def _body_text(message: EmailMessage) -> tuple[str, bool]:
    """The body, and whether it is HTML (converted later, in a budgeted child)."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return "(no text body)", False
    try:
        content = part.get_content()
    except (LookupError, ValueError):  # an unknown charset must not hide the whole message
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    return str(content).strip(), part.get_content_type() == "text/html"


def _header(message: Message, name: str) -> str:
    try:
        value = str(message[name] or "")
    except Exception:  # a malformed header from outside is shown raw rather than lost
        value = str(message.get(name, ""))
    return " ".join(value.split())


def _date(headers: Message) -> str:
    try:
        return parsedate_to_datetime(str(headers["Date"])).strftime("%Y-%m-%d %H:%M %z")
    except (TypeError, ValueError):
        return "(no date)"
