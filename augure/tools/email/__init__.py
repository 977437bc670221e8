"""`email`: the owner's mailbox over IMAP (list, read, search) and SMTP (send).

imapclient and smtplib block, so each action runs in a worker thread on its own connection.
Reading never marks mail as seen: folders are opened read-only and bodies fetched with
BODY.PEEK. A sent message is also appended to the Sent folder, as a mail client would.

`settings` is the `[tools.email]` section, `addresses` the checks of the arguments, `imap` and
`smtp` the two servers' sides, `tool` the declaration.
"""

from augure.tools.email.addresses import parse_addresses
from augure.tools.email.settings import NOT_CONFIGURED, EmailConfig, email_settings
from augure.tools.email.tool import email_tool

__all__ = ["NOT_CONFIGURED", "EmailConfig", "email_settings", "email_tool", "parse_addresses"]
