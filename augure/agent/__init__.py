"""The turn loop, dispatch, compaction, subagents (task) and the chats' personas.

May import (docs/architecture.md, "Where things are"): skills, codemode, background, tools,
scheduler, sandbox, memory, approval, store, llm, host, config, common.
"""
