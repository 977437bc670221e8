"""Telegram and the terminal: they translate between a person and the core.

May import (docs/architecture.md, "Where things are"): core, mcp, agent, skills, codemode,
background, tools, scheduler, sandbox, memory, approval, store, llm, host, config, common.
"""
