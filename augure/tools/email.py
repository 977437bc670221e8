"""`email`: the owner's mailbox over IMAP (list, read, search) and SMTP (send).

imapclient and smtplib block, so each action runs in a worker thread on its own connection.
Reading never marks mail as seen: folders are opened read-only and bodies fetched with
BODY.PEEK. A sent message is also appended to the Sent folder, as a mail client would.
"""

from __future__ import annotations

import asyncio
import contextlib
import imaplib
import os
import re
import smtplib
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from email.message import EmailMessage, Message
from email.parser import BytesHeaderParser, BytesParser
from email.utils import formataddr, formatdate, getaddresses, make_msgid, parsedate_to_datetime
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, ValidationError

from augure.config.settings import Config
from augure.config.tools import settings_for
from augure.tools.base import Egress, RunContext, ToolResult, describe, tool
from augure.tools.page_text import PageUnread, page_text
from augure.tools.readable import MAIL

if TYPE_CHECKING:
    from imapclient import IMAPClient

# imapclient (the `email` extra) is imported on first use; its base error is imaplib's, so
# catching it needs no import of the library.
IMAPClientError = imaplib.IMAP4.error


def _policies() -> ModuleType:
    """`email.policy`, imported when mail is first read or sent: it loads the standard
    library's header parser, a cost at every start for a tool most turns never call."""
    from email import policy

    return policy


NOT_CONFIGURED = "set [tools.email] imap_host, smtp_host and EMAIL_USERNAME/EMAIL_PASSWORD"
BODY_LIMIT = 20_000
# The most time an HTML body's conversion may take, in its budgeted child process (as a
# web page's: augure/tools/page_text.py), well inside the tool's timeout.
HTML_SECONDS = 30.0
NETWORK_TIMEOUT = 30.0
ADDRESS = re.compile(r"[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+")
QUOTE_AWARE_COMMA = re.compile(r',(?=(?:[^"]*"[^"]*")*[^"]*$)')
Security = Literal["ssl", "starttls", "none"]


@settings_for("email")
class EmailConfig(BaseModel):
    """`[tools.email]`; EMAIL_USERNAME and EMAIL_PASSWORD override the file's values."""

    model_config = ConfigDict(extra="forbid")

    imap_host: str | None = None
    imap_port: int | None = Field(default=None, gt=0, lt=65536)
    imap_security: Security = "ssl"
    smtp_host: str | None = None
    smtp_port: int | None = Field(default=None, gt=0, lt=65536)
    smtp_security: Security = "starttls"
    username: str | None = None
    password: SecretStr | None = None
    from_address: str | None = None

    @property
    def imap_port_or_default(self) -> int:
        return self.imap_port or {"ssl": 993}.get(self.imap_security, 143)

    @property
    def smtp_port_or_default(self) -> int:
        return self.smtp_port or {"ssl": 465, "starttls": 587}.get(self.smtp_security, 25)

    @property
    def sender(self) -> str:
        return self.from_address or self.username or ""


def email_settings(config: Config) -> EmailConfig | str:
    """The validated settings, or the one line saying what to fix."""
    data = dict(config.tools.section("email"))
    for variable, key in (("EMAIL_USERNAME", "username"), ("EMAIL_PASSWORD", "password")):
        if os.environ.get(variable):
            data[key] = os.environ[variable]
    try:
        settings = EmailConfig.model_validate(data)
    except ValidationError as exc:
        return f"fix [tools.email]: {describe(exc)}"
    if not (settings.imap_host and settings.smtp_host and settings.username and settings.password):
        return NOT_CONFIGURED
    if settings.from_address and not _is_address(settings.from_address):
        return "fix [tools.email] from_address: not a valid email address"
    return settings


def _check(config: Config) -> str | None:
    settings = email_settings(config)
    return settings if isinstance(settings, str) else None


# Argument checks run while the arguments are validated, so a malformed or injected header
# is refused before the owner is ever asked to approve it.


def _one_line(value: str | None) -> str | None:
    if value is not None and re.search(r"[\r\n\x00]", value):
        raise ValueError("must be one line: CR, LF and NUL are refused (header injection)")
    return value


def _is_address(address: str) -> bool:
    return ADDRESS.fullmatch(address) is not None


def parse_addresses(value: str | list[str] | None) -> list[tuple[str, str]]:
    """(name, address) pairs from `a@b.c, Name <d@e.f>` or a list of such strings."""
    items = [value] if isinstance(value, str) else list(value or [])
    pairs: list[tuple[str, str]] = []
    for item in items:
        _one_line(item)
        # Split on commas outside quotes, so `"Doe, J" <j@d.e>` stays one address.
        for raw in (part for part in QUOTE_AWARE_COMMA.split(item) if part.strip()):
            parsed = getaddresses([raw])
            if len(parsed) != 1 or not _is_address(parsed[0][1]):
                raise ValueError(f"{raw.strip()!r} is not one valid email address")
            if "@" in parsed[0][0]:  # `"boss@corp.com" <evil@x.y>` would mislead the approver
                raise ValueError(f"{raw.strip()!r}: a display name may not look like an address")
            pairs.append(parsed[0])
    return pairs


def _addresses(value: str | list[str] | None) -> str | list[str] | None:
    parse_addresses(value)
    return value


def _iso_date(value: str | None) -> str | None:
    if value is not None:
        try:
            date.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a date as YYYY-MM-DD") from None
    return value


OneLine = Annotated[str | None, AfterValidator(_one_line)]
Addresses = Annotated[
    str | list[str] | None,
    AfterValidator(_addresses),
    Field(description="comma-separated addresses, or a list"),
]


def _recipients(arguments: Any) -> list[str]:
    pairs = [*parse_addresses(arguments.to), *parse_addresses(arguments.cc)]
    return sorted({address.lower() for _, address in pairs + parse_addresses(arguments.bcc)})


def _target(arguments: Any) -> str:
    if arguments.action == "send":
        return "email:send:to=" + ",".join(_recipients(arguments))
    return f"email:{arguments.action}:folder={arguments.folder or 'INBOX'}"


def _classify(arguments: Any, config: Config) -> Egress:
    return Egress.WRITE if arguments.action == "send" else Egress.READ_ONLY


@tool(
    "email",
    egress=Egress.READ_ONLY,
    classify=_classify,
    target=_target,
    untrusted=True,
    offers="message",
    check=_check,
    timeout=2 * NETWORK_TIMEOUT + 10,
    # Its schema is the largest of all: a mail conversation pays one load_tools round trip.
    deferred=True,
)
async def email_tool(
    ctx: RunContext,
    action: Annotated[Literal["list", "read", "search", "send"], Field(description="what to do")],
    folder: Annotated[OneLine, Field(description="mailbox folder (list/read/search)")] = "INBOX",
    limit: Annotated[int, Field(ge=1, le=100, description="messages to show, newest first")] = 10,
    uid: Annotated[int | None, Field(ge=1, description="message uid (read)")] = None,
    sender: Annotated[OneLine, Field(alias="from", description="search: sender contains")] = None,
    subject: Annotated[
        OneLine, Field(description="search: subject contains; send: subject")
    ] = None,
    since: Annotated[
        str | None, AfterValidator(_iso_date), Field(description="search: on or after YYYY-MM-DD")
    ] = None,
    unseen: Annotated[bool, Field(description="search: unread only")] = False,
    to: Addresses = None,
    cc: Addresses = None,
    bcc: Addresses = None,
    body: Annotated[str | None, Field(description="send: plain-text body")] = None,
) -> ToolResult:
    """Read and send the owner's email. List a folder, read a message by uid (headers and
    text), search by sender, subject, date or unread, or send plain text (asks the owner
    first). Reading does not mark messages as read."""
    settings = email_settings(ctx.config)
    if isinstance(settings, str):
        return ToolResult.error(f"email is not configured: {settings}")
    folder = folder or "INBOX"
    if action == "list":
        return await asyncio.to_thread(_listing, settings, folder, [], limit)
    if action == "read":
        if uid is None:
            return ToolResult.error("read needs a uid (from list or search)")
        fetched = await asyncio.to_thread(_read, settings, folder, uid)
        return fetched if isinstance(fetched, ToolResult) else await _shown(fetched)
    if action == "search":
        criteria: list[Any] = []
        if sender:
            criteria += ["FROM", sender]
        if subject:
            criteria += ["SUBJECT", subject]
        if since:
            criteria += ["SINCE", date.fromisoformat(since)]
        if unseen:
            criteria.append("UNSEEN")
        return await asyncio.to_thread(_listing, settings, folder, criteria, limit)
    if not to:
        return ToolResult.error("send needs `to`")
    if body is None:
        return ToolResult.error("send needs `body`")
    message = _compose(settings, subject or "", body, To=to, Cc=cc, Bcc=bcc)
    return await asyncio.to_thread(_send, settings, message)


# IMAP, in a worker thread.


@contextlib.contextmanager
def _imap(settings: EmailConfig) -> Iterator[IMAPClient]:
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


def _imap_failure(settings: EmailConfig, exc: Exception) -> ToolResult:
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


def _listing(settings: EmailConfig, folder: str, criteria: list[Any], limit: int) -> ToolResult:
    try:
        with _imap(settings) as client:
            client.select_folder(folder, readonly=True)
            charset = (
                "UTF-8" if any(isinstance(c, str) and not c.isascii() for c in criteria) else None
            )
            uids = sorted(client.search(criteria or "ALL", charset), reverse=True)
            shown = uids[:limit]
            fields = b"BODY.PEEK[HEADER.FIELDS (FROM SUBJECT DATE)]"
            fetched = client.fetch(shown, [fields, b"FLAGS"]) if shown else {}
    except (IMAPClientError, OSError) as exc:
        return _imap_failure(settings, exc)
    what = "matching" if criteria else "in"
    if not uids:
        return ToolResult.ok(f"No messages {what} {folder}.")
    lines = [f"{len(uids)} messages {what} {folder}; showing {len(shown)}, newest first:"]
    for uid in shown:
        data = fetched.get(uid, {})
        raw = next((v for k, v in data.items() if k.startswith(b"BODY[HEADER")), b"")
        headers = BytesHeaderParser(policy=_policies().default).parsebytes(raw)
        seen = "seen" if b"\\Seen" in data.get(b"FLAGS", ()) else "unseen"
        lines.append(
            f"uid {uid} [{seen}] {_date(headers)} | From: {_header(headers, 'From')} | "
            f"Subject: {_header(headers, 'Subject')}"
        )
    return ToolResult.ok("\n".join(lines))


@dataclass(frozen=True)
class _Fetched:
    head: str  # uid, headers, attachments
    body: str
    html: bool  # the body is HTML, still to be converted


async def _shown(fetched: _Fetched) -> ToolResult:
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


def _read(settings: EmailConfig, folder: str, uid: int) -> ToolResult | _Fetched:
    try:
        with _imap(settings) as client:
            client.select_folder(folder, readonly=True)
            fetched = client.fetch([uid], [b"BODY.PEEK[]", b"FLAGS"]).get(uid)
    except (IMAPClientError, OSError) as exc:
        return _imap_failure(settings, exc)
    if not fetched or b"BODY[]" not in fetched:
        return ToolResult.error(f"no message with uid {uid} in {folder}")
    message = BytesParser(policy=_policies().default).parsebytes(fetched[b"BODY[]"])
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
    return _Fetched("\n".join(lines), *_body_text(message))


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


# SMTP, in a worker thread.


def _compose(
    settings: EmailConfig, subject: str, body: str, **recipients: str | list[str] | None
) -> EmailMessage:
    message = EmailMessage()
    message["From"] = settings.sender
    for name, value in recipients.items():
        pairs = parse_addresses(value)
        if pairs:
            message[name] = ", ".join(formataddr(pair) for pair in pairs)
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid(domain=settings.sender.rpartition("@")[2] or None)
    message.set_content(body)
    return message


def _send(settings: EmailConfig, message: EmailMessage) -> ToolResult:
    recipients = [
        a for name in ("To", "Cc", "Bcc") for _, a in getaddresses(message.get_all(name, []))
    ]
    where = f"{settings.smtp_host}:{settings.smtp_port_or_default}"
    try:
        with _smtp(settings) as smtp:
            # send_message drops the Bcc header from what it transmits; the envelope keeps them.
            refused = smtp.send_message(message, settings.sender, recipients)
    except smtplib.SMTPAuthenticationError as exc:
        return ToolResult.error(
            f"SMTP login to {where} failed for {settings.username}: check EMAIL_USERNAME and "
            f"EMAIL_PASSWORD (server answered {exc.smtp_code})"
        )
    except smtplib.SMTPRecipientsRefused as exc:
        return ToolResult.error(f"SMTP server {where} refused every recipient: {exc.recipients}")
    except smtplib.SMTPException as exc:
        return ToolResult.error(f"SMTP server {where} refused the message: {exc}")
    except OSError as exc:
        return ToolResult.error(f"cannot reach SMTP server {where}: {type(exc).__name__}: {exc}")
    delivered = [r for r in recipients if r not in refused]
    summary = f"Sent to {', '.join(delivered)}."
    if refused:
        summary += f" Refused by the server: {', '.join(refused)}."
    return ToolResult.ok(summary + " " + _save_sent(settings, message))


@contextlib.contextmanager
def _smtp(settings: EmailConfig) -> Iterator[smtplib.SMTP]:
    host, port = settings.smtp_host or "", settings.smtp_port_or_default
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if settings.smtp_security == "ssl":
        smtp = smtplib.SMTP_SSL(host, port, timeout=NETWORK_TIMEOUT, context=context)
    else:
        smtp = smtplib.SMTP(host, port, timeout=NETWORK_TIMEOUT)
    with smtp:
        if settings.smtp_security == "starttls":
            smtp.starttls(context=context)
        smtp.ehlo_or_helo_if_needed()
        if smtp.has_extn("auth"):
            password = settings.password.get_secret_value() if settings.password else ""
            smtp.login(settings.username or "", password)
        yield smtp


def _save_sent(settings: EmailConfig, message: EmailMessage) -> str:
    """Keep a copy in Sent; the mail is already gone, so a failure here is only reported."""
    from imapclient.imapclient import SENT

    data = message.as_bytes(policy=_policies().SMTP)  # IMAP wants CRLF line ends
    try:
        with _imap(settings) as client:
            folder = client.find_special_folder(SENT)
            if folder is None:
                folder = "Sent"
                if not client.folder_exists(folder):
                    client.create_folder(folder)
            client.append(folder, data, flags=[b"\\Seen"])
    except (IMAPClientError, OSError) as exc:
        return f"A copy could not be saved to Sent: {_imap_failure(settings, exc).output}"
    return f"A copy is in {folder}."
