"""The settings models of `augure.toml` and the environment, their loader, and what is
generated from them (the `augure init` template, docs/reference/config-keys.md).

May import (docs/architecture.md, "Where things are"): common.
"""
