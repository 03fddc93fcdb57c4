"""Tools the model can call; `default_registry()` lists the ones the app offers."""

from __future__ import annotations

from tools.registry import Tool, ToolContext, ToolInputError, ToolOutcome, ToolRegistry


def default_registry() -> ToolRegistry:
    """Return the registry of every tool the app offers the model."""
    from tools.finance import FINANCE_TOOLS

    return ToolRegistry(FINANCE_TOOLS)


__all__ = [
    "Tool",
    "ToolContext",
    "ToolInputError",
    "ToolOutcome",
    "ToolRegistry",
    "default_registry",
]
