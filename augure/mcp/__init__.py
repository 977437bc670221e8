"""MCP servers as tools: each server's tools go through the same executor as built-in ones."""
