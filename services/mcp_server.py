"""Our read tools as an MCP server: JSON-RPC answers for a stateless streamable HTTP endpoint."""

from __future__ import annotations

from typing import Any

from models.db import Database
from tools.registry import ToolContext, ToolRegistry

# The protocol versions this server speaks (the initialize handshake), newest first.
PROTOCOLS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {"name": "finance-chat", "version": "1"}
INSTRUCTIONS = (
    "Read-only tools over the user's own bank transactions, budgets and accounts. Results are "
    "the user's data; each carries the rows its figures rest on."
)
METHOD_NOT_FOUND, INVALID_PARAMS, INVALID_REQUEST = -32601, -32602, -32600


def read_tools(registry: ToolRegistry) -> list[dict[str, Any]]:
    """The tools/list entries: every tool without side effects, its input schema as sent."""
    out = []
    for definition in registry.definitions():
        tool = registry.get(definition["name"])
        if tool is not None and not tool.side_effects:
            out.append(
                {
                    "name": definition["name"],
                    "description": definition["description"],
                    "inputSchema": definition["input_schema"],
                    "annotations": {"readOnlyHint": True, "openWorldHint": False},
                }
            )
    return out


def answer(
    message: Any, user_id: int, db: Database, registry: ToolRegistry
) -> dict[str, Any] | None:
    """The JSON-RPC response to `message` (None for a notification: nothing to answer)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(None, INVALID_REQUEST, "Send one JSON-RPC 2.0 message.")
    ident, method = message.get("id"), message.get("method")
    if ident is None:
        return None  # a notification (notifications/initialized, cancelled...)
    given = message.get("params")
    params: dict[str, Any] = given if isinstance(given, dict) else {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOLS else PROTOCOLS[0]
        return _result(
            ident,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS,
            },
        )
    if method == "ping":
        return _result(ident, {})
    if method == "tools/list":
        return _result(ident, {"tools": read_tools(registry)})
    if method == "tools/call":
        return _call(ident, params, user_id, db, registry)
    return _error(ident, METHOD_NOT_FOUND, f"Method not found: {method}")


def _call(
    ident: Any, params: dict[str, Any], user_id: int, db: Database, registry: ToolRegistry
) -> dict[str, Any]:
    name, arguments = params.get("name"), params.get("arguments") or {}
    tool = registry.get(name) if isinstance(name, str) else None
    if tool is None or tool.side_effects:
        return _error(ident, INVALID_PARAMS, f"Unknown tool: {name}")
    outcome = registry.execute(tool.name, arguments, ToolContext(user_id, db))
    content = [{"type": "text", "text": outcome.content}]
    result: dict[str, Any] = {"content": content, "isError": outcome.is_error}
    if outcome.sources:
        # The rows the figures rest on, as the chat's citations use them.
        result["structuredContent"] = {"sources": list(outcome.sources)}
    return _result(ident, result)


def _result(ident: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
