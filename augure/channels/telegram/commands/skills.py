"""/skills: every skill with its state, trigger and last run."""

from __future__ import annotations

from augure.channels.telegram.commands.command import Asked, Command


async def on_skills(asked: Asked) -> None:
    listed = await asked.door.reports.skills()
    if not listed:
        await asked.say("No skills yet. Ask me to create one, or install one from the hub.")
        return
    lines = ["Skills:"]
    for record, meta, last in listed:
        trigger = f"cron {meta.schedule}" if meta and meta.schedule else "manual"
        state = f"{record.state}, {trigger}, last run: {last}"
        lines.append(f"• {record.id} {record.version} — {state}")
        if record.reason and record.state != "active":
            lines.append(f"  {record.reason[:200]}")
    await asked.say("\n".join(lines))


SKILLS = Command(
    "skills",
    menu="Skills: state, trigger, last run",
    help="/skills — skills with their state, trigger and last run",
    handler=on_skills,
)
