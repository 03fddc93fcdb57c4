"""The connector: OAuth 2.1 for apps, our tools as an MCP server at /mcp, and the apps a user
connected with the actions they asked for."""
