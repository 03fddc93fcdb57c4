"""The connector's OAuth 2.1 authorization server (authlib) for our own users: client ID
metadata documents and dynamic registration, codes with PKCE, tokens bound to `/mcp`."""
