"""The ground floor: who asked for a call (caller), the ports channels implement,
errors, progress lines, pooled connections, the import guard, login tokens, and where
the packaged templates are (data_files).

May import (docs/architecture.md, "Where things are"): nothing of Augure outside itself.
"""
