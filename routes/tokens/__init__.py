"""The caller's API tokens."""
