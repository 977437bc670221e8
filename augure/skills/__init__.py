"""Skills: folders of instructions and code the assistant runs (docs/reference/skills.md).

May import (docs/architecture.md, "Where things are"): codemode, background, tools, scheduler,
sandbox, memory, approval, store, llm, host, config, common.
"""
