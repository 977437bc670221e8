"""SQLite state: one connection on its own thread (connection), the domain operations
(state, audit, tasks), the migrations.

May import (docs/architecture.md, "Where things are"): host, config, common.
"""
