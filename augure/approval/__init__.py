"""Owner approval: the gate that holds outward calls, and the rules that pre-approve some.

May import (docs/architecture.md, "Where things are"): store, llm, host, config, common.
"""
