"""MCP servers as tool sources: the operator's configuration and the links to each server."""
