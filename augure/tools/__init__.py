"""The executor ▶ registry ▶ base ▶ result/outputs; one module per tool, a package for
the larger ones; the SSRF guard of outward requests (netguard); the tool profiles' limits.

May import (docs/architecture.md, "Where things are"): scheduler, sandbox, memory, approval,
store, llm, host, config, common.
"""
