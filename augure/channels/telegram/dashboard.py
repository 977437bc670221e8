"""/dashboard: a one-time login link to the web dashboard, for the owner's private chat only."""

from __future__ import annotations

from augure.core.door.owner import OwnerDesk

OFF = (
    "The dashboard is not running. Set [dashboard] enabled = true in augure.toml and restart "
    "me; or, while I am stopped, run `augure dashboard` on the machine."
)
PRIVATE_ONLY = "I send dashboard login links only in our private chat."


def dashboard_reply(owner: OwnerDesk, private: bool) -> str:
    if not private:  # a link in a group would let every member log in
        return PRIVATE_ONLY
    url = owner.login_link()
    if url is None:
        return OFF
    return f"Your dashboard login link (works once, for 10 minutes):\n{url}"
