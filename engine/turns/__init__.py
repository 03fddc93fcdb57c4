"""Running turns: the service that owns them, the rounds loop, one message, tool calls."""
