"""The chat model's client: Chat Completions through the openai SDK.

May import (docs/architecture.md, "Where things are"): host, config, common.
"""
