"""What a chat is told when one of its messages could not be handled: one plain line, the
details in the log."""

from __future__ import annotations

import logging

from augure.channels.telegram.delivery import Delivery
from augure.core.door.errors import StoreBusy

log = logging.getLogger(__name__)

BUSY = "I could not store your message: my database is busy. Please try again."
# The class name means nothing to the owner; the log has it, with the traceback.
NOT_HANDLED = (
    "Something went wrong on my side and that message was not handled (the details "
    "are in the log). Please send it again; if it keeps failing, /new starts afresh."
)


async def report_failure(
    delivery: Delivery, chat_id: int | None, error: BaseException | None
) -> None:
    if isinstance(error, StoreBusy):
        log.warning("a message could not be handled: %s", error)
        text = BUSY
    else:
        log.error("error while handling an update", exc_info=error)
        text = NOT_HANDLED
    if chat_id is None:
        return
    try:
        await delivery.send_text(chat_id, text)
    except Exception:
        log.exception("could not report the error to the chat")
