"""Where the model's tools come from, and users' credentials for MCP servers."""
