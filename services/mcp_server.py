"""Our tools as an MCP server on one stateless streamable HTTP endpoint, both revisions.

A request whose `_meta` (or `MCP-Protocol-Version` header) names a modern revision
(2026-07-28) is served as that revision says: its envelope and headers checked by the SDK's
own ladder (`classify_inbound_request`), `server/discover`, results with `resultType` and
cache hints, writes approved through MRTR elicitation. Any other request is a legacy one
(`initialize` negotiates 2025-11-25 or older). Wire shapes, codes and versions come from
mcp_types; the tools have one code path (services/mcp_tools.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as mt
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic import BaseModel, ValidationError

from services.mcp_tools import Call, McpError, McpTools
from services.oauth.tokens import Bearer

SERVER_INFO = mt.Implementation(name="finance-chat", version="2")
# Every revision this server speaks, newest first (the UnsupportedProtocolVersion list).
SUPPORTED = (*reversed(MODERN_PROTOCOL_VERSIONS), *reversed(HANDSHAKE_PROTOCOL_VERSIONS))
INSTRUCTIONS = (
    "Tools over the user's own bank transactions, budgets and accounts. Results are the "
    "user's data; each carries the rows its figures rest on. A change (a budget, a category) "
    "is made only once the user approves it."
)
CAPABILITIES = mt.ServerCapabilities(tools=mt.ToolsCapability(list_changed=False))
# How long a client may keep tools/list and server/discover (they change with a deploy).
CACHE_MS = 60_000
# The 2026-07-28 fields a legacy client is not sent.
MODERN_ONLY = {"result_type", "ttl_ms", "cache_scope"}


@dataclass(frozen=True)
class Reply:
    """The HTTP status and JSON-RPC body to send (None: a notification, 202)."""

    status: int
    body: dict[str, Any] | None


def answer(
    message: dict[str, Any],
    headers: Mapping[str, str],
    lines: Iterable[tuple[str, str]],
    bearer: Bearer,
    tools: McpTools,
) -> Reply:
    """Answer one JSON-RPC message; `headers` keyed by lower-case name, `lines` as sent."""
    ident, method = message.get("id"), message["method"]
    params: dict[str, Any] = message.get("params") or {}
    duplicated = find_duplicated_routing_header(lines)
    if duplicated is not None:
        return _error(ident, mt.HEADER_MISMATCH, f"The {duplicated} header is sent twice.")
    if ident is None:
        return Reply(202, None)  # a notification: accepted, nothing to say
    meta = params.get("_meta")
    version = headers.get(MCP_PROTOCOL_VERSION_HEADER)
    modern = (isinstance(meta, dict) and mt.PROTOCOL_VERSION_META_KEY in meta) or (
        version in MODERN_PROTOCOL_VERSIONS
    )
    try:
        if modern and method != "initialize":
            return _modern(message, headers, bearer, tools)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return _unsupported(ident, version)
        return _legacy(ident, method, params, bearer, tools)
    except McpError as err:
        # A legacy client reads JSON-RPC errors in a 200; a modern one by the status too.
        return _error(ident, err.code, err.message, err.data, None if modern else 200)


def _modern(
    message: dict[str, Any], headers: Mapping[str, str], bearer: Bearer, tools: McpTools
) -> Reply:
    ident, method = message["id"], message["method"]
    route = classify_inbound_request(message, headers=dict(headers))
    if isinstance(route, InboundLadderRejection):
        if route.code == mt.UNSUPPORTED_PROTOCOL_VERSION:
            return _unsupported(ident, str(route.data.get("requested")))
        return _error(ident, route.code, route.message, route.data)
    info = {mt.SERVER_INFO_META_KEY: SERVER_INFO.model_dump(mode="json", exclude_none=True)}
    result: BaseModel
    if method == "server/discover":
        result = mt.DiscoverResult(
            supported_versions=list(SUPPORTED),
            capabilities=CAPABILITIES,
            instructions=INSTRUCTIONS,
            ttl_ms=CACHE_MS,
            cache_scope="private",
        )
    elif method == "tools/list":
        result = mt.ListToolsResult(
            tools=tools.listed(bearer.scopes), ttl_ms=CACHE_MS, cache_scope="private"
        )
    elif method == "tools/call":
        call = Call(bearer, modern=True, elicitation=_elicits(route.client_capabilities))
        result = tools.call(call, message.get("params") or {})
    else:
        return _error(ident, mt.METHOD_NOT_FOUND, f"Method not found: {method}")
    body = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    body["_meta"] = {**body.get("_meta", {}), **info}
    return Reply(200, {"jsonrpc": "2.0", "id": ident, "result": body})


def _legacy(
    ident: Any, method: str, params: dict[str, Any], bearer: Bearer, tools: McpTools
) -> Reply:
    result: BaseModel
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        result = mt.InitializeResult(
            protocol_version=version,
            capabilities=CAPABILITIES,
            server_info=SERVER_INFO,
            instructions=INSTRUCTIONS,
        )
    elif method == "ping":
        result = mt.EmptyResult()
    elif method == "tools/list":
        result = mt.ListToolsResult(tools=tools.listed(bearer.scopes))
    elif method == "tools/call":
        result = tools.call(Call(bearer, modern=False, elicitation=False), params)
    else:
        return _error(ident, mt.METHOD_NOT_FOUND, f"Method not found: {method}", status=200)
    body = result.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=MODERN_ONLY)
    return Reply(200, {"jsonrpc": "2.0", "id": ident, "result": body})


def _elicits(capabilities: Any) -> bool:
    """True when the client declared form elicitation (`elicitation: {}` means form)."""
    try:
        caps = mt.ClientCapabilities.model_validate(capabilities or {})
    except ValidationError:
        return False
    found = caps.elicitation
    return found is not None and (found.form is not None or found.url is None)


def _unsupported(ident: Any, requested: str) -> Reply:
    data = mt.UnsupportedProtocolVersionErrorData(supported=list(SUPPORTED), requested=requested)
    return _error(
        ident,
        mt.UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        data.model_dump(mode="json"),
    )


def _error(
    ident: Any, code: int, message: str, data: Any = None, status: int | None = None
) -> Reply:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    http = status if status is not None else ERROR_CODE_HTTP_STATUS.get(code, 200)
    return Reply(http, {"jsonrpc": "2.0", "id": ident, "error": error})
