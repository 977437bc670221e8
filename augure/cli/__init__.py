"""The `augure` command: `main` parses and dispatches; one module per command group,
`doctor`, `backup` and the `probes` they share. The state is read and written through the
door (augure.core.door), never the store: an import-linter contract holds it.

May import (docs/architecture.md, "Where things are"): channels, dashboard, core, mcp, agent,
skills, codemode, background, tools, scheduler, sandbox, memory, approval, llm, host, config,
common.
"""
