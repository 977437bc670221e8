"""The owner's memory files.

May import (docs/architecture.md, "Where things are"): approval, store, llm, host, config,
common.
"""
