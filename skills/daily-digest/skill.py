import json
import re

import api

STATE = "daily-digest/seen.json"
TAIL = 200  # characters kept per note: enough to spot appended lines


def listing():
    files = []
    for line in api.memory_read().splitlines():
        match = re.match(r"^(.+) \((\d+) bytes\)$", line.strip())
        if match and match.group(1).endswith(".md"):
            files.append(match.group(1))
    return files


def previous():
    try:
        seen = json.loads(api.memory_read(path=STATE))
    except Exception:
        return {}
    return seen if isinstance(seen, dict) else {}


today = api.datetime().split(" ")[1]
seen = previous()
now_seen = {}
changed = []
for name in listing():
    text = api.memory_read(path=name)
    signature = f"{len(text)}:{text[-TAIL:]}"
    now_seen[name] = signature
    if seen.get(name) != signature:
        lines = [line for line in text.strip().splitlines() if line.strip()]
        changed.append((name, lines[-3:]))

jobs = [line for line in api.schedule(action="list").splitlines() if f"next {today}" in line]


def events_today():
    """Today's events, or None when no calendar is set up (or its extra is not installed)."""
    try:
        listing = api.calendar(action="list", start=today, end=today)
    except Exception as exc:
        text = str(exc)
        if "not configured" in text or "not installed" in text:
            return None
        return [f"(the calendar could not be read: {text.splitlines()[0][:200]})"]
    return [line[2:] for line in listing.splitlines() if line.startswith("- ")]


events = events_today()

print(f"Daily digest for {today}")
print("")
if changed:
    print("Memory notes new or changed since the last digest:")
    for name, lines in changed:
        print(f"- {name}")
        for line in lines:
            print(f"    {line[:160]}")
else:
    print("No memory note changed since the last digest.")
print("")
if jobs:
    print("Jobs today:")
    for line in jobs:
        print(f"- {line}")
else:
    print("No job runs today.")
if events is not None:
    print("")
    if events:
        print("Today's events:")
        for line in events:
            print(f"- {line}")
    else:
        print("No event in the calendar today.")
saved = api.memory_write(path=STATE, content=json.dumps(now_seen))
