"""Our tools over /mcp, one code path for both protocol revisions: the registry's read tools
answered at once, its write tools as actions the user approves first
(services/connector_actions.py), through the app's elicitation (2026-07-28, when it declares
it) or in the page."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any

import mcp_types as mt
from itsdangerous import BadSignature, URLSafeTimedSerializer

from models.chat import TOOL_AWAITING
from models.db import Database
from services.connector_actions import ActionStore, Asker, call_digest
from services.oauth.tokens import Bearer
from tools.registry import ToolContext, ToolOutcome, ToolRegistry

READ, WRITE = "read", "write"
APPROVAL_KEY = "approval"  # the one input request a write asks for
WRITE_NOTE = " Changes nothing until the user approves it."
WAITING = (
    "Not done yet: this change waits for the user's approval, which they give or refuse in the "
    "chat page (Connected apps). Nothing has changed. Call this tool again with the same "
    "arguments to learn the outcome."
)
DECLINED = "The user declined this change, so it was not made."


class ScopeMissing(Exception):
    """The token lacks a scope this call needs (a 403 insufficient_scope challenge)."""

    def __init__(self, scope: str) -> None:
        super().__init__(scope)
        self.scope = scope


class McpError(Exception):
    """A JSON-RPC error for the caller (its code from mcp_types)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


@dataclass(frozen=True)
class Call:
    """One request's caller and what its protocol revision allows."""

    bearer: Bearer
    modern: bool
    elicitation: bool  # the client declared form elicitation (2026-07-28 only)


class McpTools:
    """tools/list and tools/call over the registry."""

    def __init__(
        self,
        registry: ToolRegistry,
        db: Database,
        actions: ActionStore,
        writes: bool,
        secret: str,
        state_max_age: float,
    ) -> None:
        self.registry, self.db, self.actions, self.writes = registry, db, actions, writes
        self.signer = URLSafeTimedSerializer(secret, salt="mcp-request-state")
        self.state_max_age = state_max_age

    def listed(self, scopes: frozenset[str]) -> list[mt.Tool]:
        """The tools a token with `scopes` may call: reads, and writes with `write`."""
        out = []
        for definition in self.registry.definitions():
            tool = self.registry.get(definition["name"])
            if tool is None or (tool.side_effects and not self._writes(scopes)):
                continue
            if not tool.side_effects and READ not in scopes:
                continue
            note = WRITE_NOTE if tool.side_effects else ""
            hints = mt.ToolAnnotations(
                read_only_hint=not tool.side_effects,
                destructive_hint=False if tool.side_effects else None,
                open_world_hint=False,
            )
            out.append(
                mt.Tool(
                    name=definition["name"],
                    description=definition["description"] + note,
                    input_schema=definition["input_schema"],
                    annotations=hints,
                )
            )
        return out

    def _writes(self, scopes: frozenset[str]) -> bool:
        return self.writes and WRITE in scopes

    def call(
        self, call: Call, params: dict[str, Any]
    ) -> mt.CallToolResult | mt.InputRequiredResult:
        """Answer one tools/call (ScopeMissing and McpError for the caller's faults)."""
        try:
            asked = mt.CallToolRequestParams.model_validate(params)
        except ValueError as err:
            raise McpError(mt.INVALID_PARAMS, "Invalid tools/call params.") from err
        tool = self.registry.get(asked.name)
        if tool is None or (tool.side_effects and not self.writes):
            raise McpError(mt.INVALID_PARAMS, f"Unknown tool: {asked.name}")
        needed = WRITE if tool.side_effects else READ
        if needed not in call.bearer.scopes:
            raise ScopeMissing(needed)
        arguments = asked.arguments or {}
        ctx = ToolContext(call.bearer.user_id, self.db)
        if not tool.side_effects:
            return _result(self.registry.execute(tool.name, arguments, ctx))
        preview = self.registry.preview(tool.name, arguments, ctx)
        if isinstance(preview, ToolOutcome):  # bad input: worded as the chat words it
            return _result(preview)
        bearer = call.bearer
        asker = Asker(bearer.user_id, bearer.client_name, bearer.connection_id, bearer.api_token_id)
        action = self.actions.ask(asker, tool.name, arguments, preview)
        if asked.request_state is not None and call.modern:
            action = self._answered(call, asked, action)
            # Asked and dismissed: the page decides now, the app is not asked again.
            call = replace(call, elicitation=False)
        return self._outcome(call, action)

    def _answered(
        self, call: Call, asked: mt.CallToolRequestParams, action: dict[str, Any]
    ) -> dict[str, Any]:
        """The user's answer to our elicitation, recorded as their decision."""
        state = self._state(call, asked)
        if state != action["id"] or action["status"] != TOOL_AWAITING:
            return action
        answer = (asked.input_responses or {}).get(APPROVAL_KEY)
        if not isinstance(answer, mt.ElicitResult) or answer.action == "cancel":
            return action  # dismissed: the page can still decide
        approved = answer.action == "accept" and (answer.content or {}).get("approve") is True
        reason = None if approved else "declined in the app"
        return self.actions.decide(call.bearer.user_id, action["id"], approved, reason)

    def _state(self, call: Call, asked: mt.CallToolRequestParams) -> str | None:
        """The action a requestState names, if it is ours, fresh, this caller's and this
        call's (the MRTR page: integrity, principal, expiry, the originating request)."""
        try:
            data = self.signer.loads(
                asked.request_state or "", max_age=math.ceil(self.state_max_age)
            )
        except BadSignature:
            raise McpError(mt.INVALID_PARAMS, "The requestState is not valid.") from None
        digest = call_digest(asked.name, asked.arguments or {})
        if data.get("p") != _principal(call.bearer) or data.get("d") != digest:
            raise McpError(mt.INVALID_PARAMS, "The requestState is for another request.")
        action = data.get("a")
        return action if isinstance(action, str) else None

    def _outcome(
        self, call: Call, action: dict[str, Any]
    ) -> mt.CallToolResult | mt.InputRequiredResult:
        if action["status"] != TOOL_AWAITING:
            self.actions.reported(action["id"])
            if action["approval"] != "approved":
                text = DECLINED + (f" They said: {action['reason']}" if action["reason"] else "")
                return _text_result(text, True, {"status": "declined", "action": action["id"]})
            return _blocks_result(action["result"] or [], action["is_error"])
        if call.modern and call.elicitation:
            return self._ask_user(call, action)
        structured = {
            "status": "awaiting_approval",
            "action": action["id"],
            "preview": action["preview"],
        }
        return _text_result(WAITING, False, structured)

    def _ask_user(self, call: Call, action: dict[str, Any]) -> mt.InputRequiredResult:
        summary = action["preview"].get("summary") or action["name"]
        changes = "; ".join(
            f"{c.get('field')}: {c.get('before') or '—'} → {c.get('after') or '—'}"
            for c in action["preview"].get("changes", [])
        )
        message = f"Approve this change to your finances? {summary}." + (
            f" ({changes})" if changes else ""
        )
        schema = {
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": "Make this change now (the chat page can decide it too).",
                }
            },
            "required": ["approve"],
        }
        request = mt.ElicitRequest(
            params=mt.ElicitRequestFormParams(message=message, requested_schema=schema)
        )
        payload = {
            "a": action["id"],
            "p": _principal(call.bearer),
            "d": call_digest(action["name"], action["input"]),
        }
        return mt.InputRequiredResult(
            input_requests={APPROVAL_KEY: request}, request_state=self.signer.dumps(payload)
        )


def _principal(bearer: Bearer) -> list[int | None]:
    return [bearer.user_id, bearer.connection_id, bearer.api_token_id]


def _result(outcome: ToolOutcome) -> mt.CallToolResult:
    return _blocks_result(outcome.blocks(), outcome.is_error)


def _blocks_result(blocks: list[dict[str, Any]], is_error: bool) -> mt.CallToolResult:
    """A stored or fresh tool result: its text, and the rows its figures rest on."""
    text, *sources = blocks or [{"type": "text", "text": ""}]
    structured = {"sources": sources} if sources else None
    return mt.CallToolResult(
        content=[mt.TextContent(type="text", text=str(text.get("text", "")))],
        structured_content=structured,
        is_error=is_error,
    )


def _text_result(text: str, is_error: bool, structured: dict[str, Any]) -> mt.CallToolResult:
    body = f"{text}\n{json.dumps(structured, default=str)}"
    return mt.CallToolResult(
        content=[mt.TextContent(type="text", text=body)],
        structured_content=structured,
        is_error=is_error,
    )
