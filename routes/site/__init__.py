"""The site's own endpoints: the chat page and its files, liveness and metrics."""
