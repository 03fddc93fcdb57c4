"""A loopback Anthropic API that applies the prompt-caching rules, and what drives it."""
