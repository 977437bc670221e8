"""The monty runtime, the api.* stubs, the execute_code tool.

May import (docs/architecture.md, "Where things are"): background, tools, scheduler, sandbox,
memory, approval, store, llm, host, config, common.
"""
