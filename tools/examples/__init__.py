"""Example tools modules an operator names in TOOLS (docs/tools.md)."""
