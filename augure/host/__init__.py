"""The machine the bot runs on: the home folder (privacy, one bot per home), the log
files, and the secret values kept out of every text that leaves the process.

May import (docs/architecture.md, "Where things are"): config, common.
"""
