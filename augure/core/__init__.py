"""The composition root: builds every service once, wires it, owns the start and stop
order; the door (desks by audience) channels, the dashboard and the CLI call; what a start
settles after a crash.

May import (docs/architecture.md, "Where things are"): mcp, agent, skills, codemode, background,
tools, scheduler, sandbox, memory, approval, store, llm, host, config, common.
"""
