"""Sending over SMTP, in a worker thread, and a copy appended to the Sent folder as a mail
client would."""

from __future__ import annotations

import contextlib
import smtplib
import ssl
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import formataddr, formatdate, getaddresses, make_msgid

from augure.tools.email.addresses import parse_addresses
from augure.tools.email.imap import IMAPClientError, connected, failure, policies
from augure.tools.email.settings import NETWORK_TIMEOUT, EmailConfig
from augure.tools.result import ToolResult


def compose(
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


def send_mail(settings: EmailConfig, message: EmailMessage) -> ToolResult:
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

    data = message.as_bytes(policy=policies().SMTP)  # IMAP wants CRLF line ends
    try:
        with connected(settings) as client:
            folder = client.find_special_folder(SENT)
            if folder is None:
                folder = "Sent"
                if not client.folder_exists(folder):
                    client.create_folder(folder)
            client.append(folder, data, flags=[b"\\Seen"])
    except (IMAPClientError, OSError) as exc:
        return f"A copy could not be saved to Sent: {failure(settings, exc).output}"
    return f"A copy is in {folder}."
