"""Augure: a self-hosted personal AI assistant."""

__version__ = "0.1.0"
