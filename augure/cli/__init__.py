"""The `augure` command: `main` parses and dispatches; one module per command group,
`doctor`, `backup` and the `probes` they share.

May import (docs/architecture.md, "Where things are"): channels, dashboard, core, mcp, agent,
skills, codemode, background, tools, scheduler, sandbox, memory, approval, store, llm, host,
config, common.
"""
