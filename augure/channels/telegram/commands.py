"""The owner's informational commands: the menu, /help, and the reports /status, /jobs and
/memory send (plain text, built from the core)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from telegram import Update
from telegram.constants import ChatType

from augure.core.front import Front
from augure.scheduler.jobs import local
from augure.tools.limits import describe

COMMANDS = {
    "start": "Introduce the assistant",
    "help": "What I can do and the commands",
    "new": "Start a fresh conversation",
    "status": "Model, uptime and state",
    "approvals": "Pending approvals and always-allow rules",
    "usage": "Tokens and cost: last turn; spend today and this month against the caps",
    "memory": "Memory files and sizes",
    "jobs": "Scheduled jobs",
    "tasks": "Background tasks, with Cancel buttons",
    "pause": "Pause scheduled jobs",
    "resume": "Resume scheduled jobs",
    "skills": "Skills: state, trigger, last run",
    "persona": "Choose this chat's persona",
    "dashboard": "A one-time login link to the web dashboard",
}

# What an owner command answers outside the owner's private chat: in a group everybody there
# would read the answer, and another allowed user is not the owner (docs/security.md).
OWNER_ONLY = "I answer /{command} only in our private chat, and only for my owner."

HELP = """I am your personal assistant. Write to me in plain language.

/new — start a fresh conversation (memory files are kept)
/status — model, uptime and state
/approvals — pending approvals and always-allow rules (with Revoke buttons)
/jobs — scheduled jobs; /pause and /resume stop and restart them
/tasks — background work, with a Cancel button each
/skills — skills with their state, trigger and last run
/usage — tokens and estimated cost; /memory — memory files
/persona — choose this chat's persona (/persona NAME switches)
/dashboard — a one-time login link to the web dashboard

Send photos, documents, voice notes, locations, contacts and stickers too.
In a group, mention me or reply to me.
/help — this message

Anything that acts outside (sending, writing, running code) waits for your Approve."""


def in_owners_private_chat(update: Update, owner_chat: str | None) -> bool:
    """Sent by the owner in their private chat with the bot (whose id is the owner's)."""
    chat, user = update.effective_chat, update.effective_user
    return (
        owner_chat is not None
        and chat is not None
        and chat.type == ChatType.PRIVATE
        and str(chat.id) == owner_chat
        and user is not None
        and str(user.id) == owner_chat
    )


async def status_report(front: Front) -> str:
    status = await front.status()
    hours, rest = divmod(status.uptime_seconds, 3600)
    zone = ZoneInfo(status.zone)
    jobs = status.jobs
    lines = [
        f"Augure {status.version}",
        f"Model: {status.model}",
        f"Uptime: {hours}h {rest // 60}m {rest % 60}s",
        f"Tools: {len(status.tools)} ({', '.join(status.tools)})",
        f"Pending approvals: {status.pending_approvals}",
        f"Scheduler: {'paused' if status.paused else 'active'}, "
        f"{len(jobs)} job(s)"
        + (f", next at {local(jobs[0].next_run, zone)}" if jobs and jobs[0].next_run else ""),
    ]
    # Each limit with today's use (docs/reference/limits.md).
    lines += ["Limits:", *(f"• {describe(use)}" for use in status.limits)] if status.limits else []
    lines += [status.mcp] if status.mcp else []
    if status.fallback is not None:
        used = status.fallback
        when = datetime.fromtimestamp(used.at, zone).strftime("%Y-%m-%d %H:%M")
        lines.append(f"Last fallback: {used.model} answered at {when}: {used.why}")
    return "\n".join(lines)


async def jobs_report(front: Front) -> str:
    listed = await front.jobs()
    zone = ZoneInfo(listed.zone)
    state = "paused" if listed.paused else "active"
    lines = [f"Scheduler: {state} ({listed.zone})"]
    lines += [f"• {job.describe(zone)}" for job in listed.jobs] or ["No scheduled jobs."]
    return "\n".join(lines)


def memory_report(front: Front) -> str:
    files = front.memory_files()
    lines = [f"{name} — {size} bytes" for name, size in files] or ["Memory is empty."]
    return "Memory files:\n" + "\n".join(lines)
