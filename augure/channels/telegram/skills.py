"""/skills: every skill with its state, trigger and last run."""

from __future__ import annotations

from augure.core.door.reports import Reports


async def skills_report(reports: Reports) -> str:
    listed = await reports.skills()
    if not listed:
        return "No skills yet. Ask me to create one, or install one from the hub."
    lines = ["Skills:"]
    for record, meta, last in listed:
        trigger = f"cron {meta.schedule}" if meta and meta.schedule else "manual"
        state = f"{record.state}, {trigger}, last run: {last}"
        lines.append(f"• {record.id} {record.version} — {state}")
        if record.reason and record.state != "active":
            lines.append(f"  {record.reason[:200]}")
    return "\n".join(lines)
