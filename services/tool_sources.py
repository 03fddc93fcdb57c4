"""The model's tools by source, as the tools panel lists them."""

from __future__ import annotations

from typing import Any

from engine.turns.tools import ToolRunner
from tools.finance import FINANCE_TOOLS

BUILT_IN = frozenset(t.name for t in FINANCE_TOOLS)


def tool_sources(runner: ToolRunner) -> list[dict[str, Any]]:
    """Built-in tools, the operator's Python tools, then each MCP server with its state."""
    ours = [_tool(runner, d) for d in runner.registry.definitions()]
    out: list[dict[str, Any]] = [
        _source("built-in", "built-in", [t for t in ours if t["name"] in BUILT_IN]),
        _source("python", "python", [t for t in ours if t["name"] not in BUILT_IN]),
    ]
    if runner.hub is not None:
        out.extend(runner.hub.sources())
    return out


def _tool(runner: ToolRunner, definition: dict[str, Any]) -> dict[str, Any]:
    tool = runner.registry.get(definition["name"])
    side_effects = tool is not None and tool.side_effects
    return {
        "name": definition["name"],
        "description": definition["description"],
        "read_only": not side_effects,
    }


def _source(name: str, kind: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "kind": kind, "state": "up", "tools": tools}
