"""The `email` tool: its arguments, its targets (`email:send:to=...`), and each action handed to
IMAP or SMTP in a worker thread."""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from augure.config.settings import Config
from augure.tools.arguments import OneLine
from augure.tools.base import Egress, RunContext, ToolResult, tool
from augure.tools.email.addresses import Addresses, iso_date, recipients
from augure.tools.email.settings import NETWORK_TIMEOUT, email_settings, settings_problem


def _target(arguments: Any) -> str:
    if arguments.action == "send":
        return "email:send:to=" + ",".join(recipients(arguments))
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
    check=settings_problem,
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
        str | None, AfterValidator(iso_date), Field(description="search: on or after YYYY-MM-DD")
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
    # The IMAP and SMTP clients load at the first call, not with the bot's start.
    from augure.tools.email.imap import list_messages, read_message, shown_message
    from augure.tools.email.smtp import compose, send_mail

    folder = folder or "INBOX"
    if action == "list":
        return await asyncio.to_thread(list_messages, settings, folder, [], limit)
    if action == "read":
        if uid is None:
            return ToolResult.error("read needs a uid (from list or search)")
        fetched = await asyncio.to_thread(read_message, settings, folder, uid)
        return fetched if isinstance(fetched, ToolResult) else await shown_message(fetched)
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
        return await asyncio.to_thread(list_messages, settings, folder, criteria, limit)
    if not to:
        return ToolResult.error("send needs `to`")
    if body is None:
        return ToolResult.error("send needs `body`")
    message = compose(settings, subject or "", body, To=to, Cc=cc, Bcc=bcc)
    return await asyncio.to_thread(send_mail, settings, message)
