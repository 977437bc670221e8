"""MCP servers as tools: each server's tools go through the same executor as built-in ones.

May import (docs/architecture.md, "Where things are"): agent, skills, codemode, background,
tools, scheduler, sandbox, memory, approval, store, llm, host, config, common.
"""
