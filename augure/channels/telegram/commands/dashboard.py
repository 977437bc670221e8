"""/dashboard: a one-time login link to the web dashboard, for the owner's private chat only."""

from __future__ import annotations

from augure.channels.telegram.commands.command import Asked, Command

NOT_RUNNING = (
    "The dashboard is not running. Set [dashboard] enabled = true in augure.toml and restart "
    "me; or, while I am stopped, run `augure dashboard` on the machine."
)
PRIVATE_ONLY = "I send dashboard login links only in our private chat."


def login_reply(asked: Asked) -> str:
    if not asked.private:  # a link in a group would let every member log in
        return PRIVATE_ONLY
    url = asked.door.owner.login_link()
    if url is None:
        return NOT_RUNNING
    return f"Your dashboard login link (works once, for 10 minutes):\n{url}"


async def on_dashboard(asked: Asked) -> None:
    await asked.say(login_reply(asked))


DASHBOARD = Command(
    "dashboard",
    menu="A one-time login link to the web dashboard",
    help="/dashboard — a one-time login link to the web dashboard",
    handler=on_dashboard,
)
