"""The local web dashboard (docs/reference/dashboard.md): a channel that shows state and decides
approvals.

May import (docs/architecture.md, "Where things are"): core, mcp, agent, skills, codemode,
background, tools, scheduler, sandbox, memory, approval, store, llm, host, config, common.
"""
