"""Errors any layer may raise for the CLI to print as one line."""

from __future__ import annotations


class UsageError(Exception):
    """A mistake in what the user typed or configured: printed as one line."""
