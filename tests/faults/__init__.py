"""Fault-injection tests and their loopback Anthropic upstream."""
