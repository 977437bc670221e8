"""Timed work: jobs (cron, one-shot, their runs) and the heartbeat.

May import (docs/architecture.md, "Where things are"): approval, store, llm, host, config,
common.
"""
