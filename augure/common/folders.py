"""The folder a chat's own files live in under the home (`workspaces/NAME`, `inboxes/NAME`):
one rule, shared by the sandbox that mounts it, the tools that list it and the forget that
removes it."""

from __future__ import annotations

import hashlib
import re

_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def workspace_name(chat_id: str | None) -> str:
    """A folder name for a chat id that cannot be `.`, `..`, contain `/` or collide.

    Plain ids (Telegram's are integers) keep their name. Anything else becomes a readable
    prefix plus a hash; the dot in that form never occurs in a plain name, so no chat can
    choose an id that lands in another chat's folder.
    """
    if chat_id is None:
        return "local.default"
    if _PLAIN.fullmatch(chat_id):
        return chat_id
    readable = re.sub(r"[^A-Za-z0-9_-]", "_", chat_id)[:32]
    digest = hashlib.sha256(chat_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{readable}.{digest}"
