"""The upstream model: the SDK client wrapper and the retry policy."""
