"""Tools the model can call; `default_registry()` lists the ones the app offers."""

from __future__ import annotations

from collections.abc import Iterable

from tools.registry import Tool, ToolContext, ToolInputError, ToolOutcome, ToolRegistry


def default_registry(modules: Iterable[str] = ()) -> ToolRegistry:
    """Return the registry of every tool the app offers the model: the finance tools, then
    those of the operator's tools `modules` (TOOLS); a bad module raises ToolsModuleError."""
    from tools.finance import FINANCE_TOOLS
    from tools.loading import load_tools

    return ToolRegistry([*FINANCE_TOOLS, *load_tools(modules, [t.name for t in FINANCE_TOOLS])])


__all__ = [
    "Tool",
    "ToolContext",
    "ToolInputError",
    "ToolOutcome",
    "ToolRegistry",
    "default_registry",
]
