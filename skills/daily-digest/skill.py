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
saved = api.memory_write(path=STATE, content=json.dumps(now_seen))
