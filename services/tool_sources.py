"""The model's tools by source, as the tools panel lists them."""

from __future__ import annotations

from typing import Any

from engine.turns.tools import ToolRunner
from tools.finance import FINANCE_TOOLS

BUILT_IN = frozenset(t.name for t in FINANCE_TOOLS)


def tool_sources(runner: ToolRunner) -> list[dict[str, Any]]:
    """Built-in tools, the operator's Python tools, then each MCP server with its state."""
    ours = [d["name"] for d in runner.registry.definitions()]
    out: list[dict[str, Any]] = [
        _source("built-in", "built-in", [n for n in ours if n in BUILT_IN]),
        _source("python", "python", [n for n in ours if n not in BUILT_IN]),
    ]
    if runner.hub is not None:
        out.extend(runner.hub.sources())
    return out


def _source(name: str, kind: str, tools: list[str]) -> dict[str, Any]:
    return {"name": name, "kind": kind, "state": "up", "tools": [{"name": n} for n in tools]}
