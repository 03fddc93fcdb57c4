"""The event contract: every event a turn's stream carries, its payload, and its constructor.

One definition: `EVENT_TYPES` (the registry `encode_event` checks), the OpenAPI SSE schema
(routes/chat/responses.py), the page's `/web/js/protocol.js` (routes/site/web.py) and the table of
docs/protocol.md all come from `PAYLOADS`, and tests/streaming/test_contract.py fails when
any of them differs. Emitting code builds each event through its constructor here, so mypy
checks every payload it sends; readers type what they decode with the same TypedDicts.
"""

# No `from __future__ import annotations`: Python 3.11 reads NotRequired only from evaluated
# annotations, and the contract test compares each payload's required and optional keys.
from typing import Any, Final, Literal, NotRequired, TypedDict, get_args

__all__ = [
    "BUSY_POLICIES",
    "DEFAULT_BUSY_POLICY",
    "EVENT_TYPES",
    "PAYLOADS",
    "TURN_STATUSES",
    "BusyPolicy",
    "Event",
    "EventName",
    "MessageStatus",
    "TurnStatus",
]

EventName = Literal[
    "turn_start",
    "context_trimmed",
    "message_start",
    "block_start",
    "block_delta",
    "block_end",
    "progress",
    "message_end",
    "message_discarded",
    "approval_resolved",
    "tool_result",
    "approval_requested",
    "turn_error",
    "turn_end",
]
TURN_START: Final = "turn_start"
CONTEXT_TRIMMED: Final = "context_trimmed"
MESSAGE_START: Final = "message_start"
BLOCK_START: Final = "block_start"
BLOCK_DELTA: Final = "block_delta"
BLOCK_END: Final = "block_end"
# A short note the model wrote between tool calls (a thinking block with text): a status line.
PROGRESS: Final = "progress"
MESSAGE_END: Final = "message_end"
MESSAGE_DISCARDED: Final = "message_discarded"
# A side-effect tool call waits for the user (the turn then ends `awaiting_approval`); the
# turn that continues it says how each was decided before their results.
APPROVAL_RESOLVED: Final = "approval_resolved"
TOOL_RESULT: Final = "tool_result"
APPROVAL_REQUESTED: Final = "approval_requested"
ERROR: Final = "turn_error"
TURN_END: Final = "turn_end"

TurnStatus = Literal[
    "queued",
    "running",
    "awaiting_approval",
    "continued",
    "completed",
    "failed",
    "cancelled",
    "max_rounds",
    "interrupted",
]
TURN_STATUSES: tuple[TurnStatus, ...] = get_args(TurnStatus)
MessageStatus = Literal["queued", "streaming", "complete", "incomplete", "discarded"]
# What a message sent while a turn runs on its session does (`if_busy`, BUSY_POLICY).
BusyPolicy = Literal["reject", "queue", "interrupt"]
BUSY_POLICIES: tuple[BusyPolicy, ...] = get_args(BusyPolicy)
DEFAULT_BUSY_POLICY: BusyPolicy = "queue"

Json = dict[str, Any]


def turn_status(value: str) -> TurnStatus:
    """A stored turn status as the contract types it; refuse one it does not know."""
    if value not in TURN_STATUSES:
        raise ValueError(f"{value!r} is not a turn status")
    return value


class TurnStart(TypedDict):
    """The turn begins (or, `reset`, a client must drop what it showed and render anew)."""

    turn_id: str
    session_id: str
    # The question: the turn's own, or the one a regenerate or a continuation answers.
    user_message_id: str | None
    continues: NotRequired[str]
    replayed: NotRequired[bool]
    reset: NotRequired[bool]


class ContextTrimmed(TypedDict):
    """The next model call leaves out more of the conversation than the one before."""

    omitted_turns: int
    omitted_messages: int
    elided_results: int
    first_kept_message_id: str | None


class MessageStart(TypedDict):
    """An assistant message begins."""

    message_id: str
    role: Literal["assistant"]
    model: str | None


class BlockStart(TypedDict):
    """A content block begins: `block` as it started (tool calls: `tool_use_id`, `name`)."""

    message_id: str
    block_id: str
    index: int
    type: str | None
    block: Json
    tool_use_id: NotRequired[str]
    name: NotRequired[str]


class BlockDelta(TypedDict):
    """A piece of a block: the API's delta object."""

    message_id: str
    block_id: str
    delta: Json


class BlockEnd(TypedDict):
    """A block ends; what it finally holds, or `incomplete` when it was cut off."""

    message_id: str
    block_id: str
    index: int
    type: str | None
    input: NotRequired[Json]
    error: NotRequired[str]
    signature: NotRequired[str]
    citations: NotRequired[list[Any]]
    incomplete: NotRequired[bool]


class Progress(TypedDict):
    """What the model says it is doing: a thinking block's text, once the block ended."""

    message_id: str
    block_id: str
    text: str


class MessageEnd(TypedDict):
    """An assistant message ends (`incomplete` when a cancel or failure cut it short)."""

    message_id: str
    stop_reason: str | None
    usage: Json | None
    context_management: NotRequired[Json]
    incomplete: NotRequired[bool]


class MessageDiscarded(TypedDict):
    """Drop what was shown for a message: it is not in the history."""

    message_id: str
    reason: str
    attempt: int


class ApprovalResolved(TypedDict):
    """How a call the paused turn asked about was decided."""

    tool_use_id: str
    name: str
    approved: bool
    reason: str | None


class ToolResult(TypedDict):
    """A tool call's result (`declined`: what to show people instead of `content`)."""

    message_id: str
    tool_use_id: str
    name: str | None
    is_error: bool
    content: Any
    declined: NotRequired[Json]


class ApprovalRequested(TypedDict):
    """A call that changes the user's data waits for their decision."""

    turn_id: str
    tool_use_id: str
    name: str
    input: Json
    preview: Json | None
    # None only in a turn rebuilt from storage (the AI SDK's stored view), which keeps no deadline.
    expires_at: str | None


class TurnError(TypedDict):
    """Why the turn stopped early."""

    code: str
    message: str | None


class TurnEnd(TypedDict):
    """Always the last event of a turn."""

    turn_id: str
    status: TurnStatus


# Every event type, in the order a turn first sends them, with its payload.
PAYLOADS: Final[dict[EventName, type[Any]]] = {
    TURN_START: TurnStart,
    CONTEXT_TRIMMED: ContextTrimmed,
    MESSAGE_START: MessageStart,
    BLOCK_START: BlockStart,
    BLOCK_DELTA: BlockDelta,
    BLOCK_END: BlockEnd,
    PROGRESS: Progress,
    MESSAGE_END: MessageEnd,
    MESSAGE_DISCARDED: MessageDiscarded,
    APPROVAL_RESOLVED: ApprovalResolved,
    TOOL_RESULT: ToolResult,
    APPROVAL_REQUESTED: ApprovalRequested,
    ERROR: TurnError,
    TURN_END: TurnEnd,
}
EVENT_TYPES: Final[tuple[EventName, ...]] = tuple(PAYLOADS)
assert set(EVENT_TYPES) == set(get_args(EventName)), "PAYLOADS names every EventName once"

TurnStartEvent = tuple[Literal["turn_start"], TurnStart]
ContextTrimmedEvent = tuple[Literal["context_trimmed"], ContextTrimmed]
MessageStartEvent = tuple[Literal["message_start"], MessageStart]
BlockStartEvent = tuple[Literal["block_start"], BlockStart]
BlockDeltaEvent = tuple[Literal["block_delta"], BlockDelta]
BlockEndEvent = tuple[Literal["block_end"], BlockEnd]
ProgressEvent = tuple[Literal["progress"], Progress]
MessageEndEvent = tuple[Literal["message_end"], MessageEnd]
MessageDiscardedEvent = tuple[Literal["message_discarded"], MessageDiscarded]
ApprovalResolvedEvent = tuple[Literal["approval_resolved"], ApprovalResolved]
ToolResultEvent = tuple[Literal["tool_result"], ToolResult]
ApprovalRequestedEvent = tuple[Literal["approval_requested"], ApprovalRequested]
TurnErrorEvent = tuple[Literal["turn_error"], TurnError]
TurnEndEvent = tuple[Literal["turn_end"], TurnEnd]
# One event as emitted: its name and its payload, paired so mypy checks they match.
Event = (
    TurnStartEvent
    | ContextTrimmedEvent
    | MessageStartEvent
    | BlockStartEvent
    | BlockDeltaEvent
    | BlockEndEvent
    | ProgressEvent
    | MessageEndEvent
    | MessageDiscardedEvent
    | ApprovalResolvedEvent
    | ToolResultEvent
    | ApprovalRequestedEvent
    | TurnErrorEvent
    | TurnEndEvent
)


def turn_start(
    turn_id: str,
    session_id: str,
    user_message_id: str | None,
    *,
    continues: str | None = None,
    replayed: bool = False,
    reset: bool = False,
) -> TurnStartEvent:
    """The turn's first event; the optional keys only when they say something."""
    data: TurnStart = {
        "turn_id": turn_id,
        "session_id": session_id,
        "user_message_id": user_message_id,
    }
    if continues is not None:
        data["continues"] = continues
    if replayed:
        data["replayed"] = True
    if reset:
        data["reset"] = True
    return TURN_START, data


def context_trimmed(
    omitted_turns: int, omitted_messages: int, elided_results: int, first_kept: str | None
) -> ContextTrimmedEvent:
    """The call about to be made leaves out more than the one before."""
    return CONTEXT_TRIMMED, {
        "omitted_turns": omitted_turns,
        "omitted_messages": omitted_messages,
        "elided_results": elided_results,
        "first_kept_message_id": first_kept,
    }


def message_start(message_id: str, model: str | None) -> MessageStartEvent:
    """An assistant message begins."""
    return MESSAGE_START, {"message_id": message_id, "role": "assistant", "model": model}


def block_start(message_id: str, block_id: str, index: int, block: Json) -> BlockStartEvent:
    """A block begins; a tool call's id and name are repeated at the top."""
    data: BlockStart = {
        "message_id": message_id,
        "block_id": block_id,
        "index": index,
        "type": block.get("type"),
        "block": block,
    }
    if "id" in block and "name" in block:
        data["tool_use_id"], data["name"] = block["id"], block["name"]
    return BLOCK_START, data


def block_delta(message_id: str, block_id: str, delta: Json) -> BlockDeltaEvent:
    """A piece of a block."""
    return BLOCK_DELTA, {"message_id": message_id, "block_id": block_id, "delta": delta}


def block_end(
    message_id: str,
    block_id: str,
    index: int,
    block: Json,
    *,
    error: str | None = None,
    incomplete: bool = False,
) -> BlockEndEvent:
    """A block ends with what it holds (`input`, `signature`, `citations`), or cut off."""
    data: BlockEnd = {
        "message_id": message_id,
        "block_id": block_id,
        "index": index,
        "type": block.get("type"),
    }
    if "input" in block:
        data["input"] = block["input"]
    if "signature" in block:
        data["signature"] = block["signature"]
    if "citations" in block:
        data["citations"] = block["citations"]
    if error is not None:
        data["error"] = error
    if incomplete:
        data["incomplete"] = True
    return BLOCK_END, data


def progress(message_id: str, block_id: str, text: str) -> ProgressEvent:
    """The note a thinking block carried (the page's status line; the AI SDK's reasoning)."""
    return PROGRESS, {"message_id": message_id, "block_id": block_id, "text": text}


def message_end(
    message_id: str,
    stop_reason: str | None,
    usage: Json | None,
    *,
    context_management: Json | None = None,
    incomplete: bool = False,
) -> MessageEndEvent:
    """An assistant message ends."""
    data: MessageEnd = {"message_id": message_id, "stop_reason": stop_reason, "usage": usage}
    if context_management:
        data["context_management"] = context_management
    if incomplete:
        data["incomplete"] = True
    return MESSAGE_END, data


def message_discarded(message_id: str, reason: str, attempt: int = 0) -> MessageDiscardedEvent:
    """Drop a message from view."""
    return MESSAGE_DISCARDED, {"message_id": message_id, "reason": reason, "attempt": attempt}


def approval_resolved(
    tool_use_id: str, name: str, approved: bool, reason: str | None
) -> ApprovalResolvedEvent:
    """How a call waiting for the user was decided."""
    return APPROVAL_RESOLVED, {
        "tool_use_id": tool_use_id,
        "name": name,
        "approved": approved,
        "reason": reason,
    }


def tool_result(message_id: str, block: Json, name: str | None) -> ToolResultEvent:
    """The result event of one stored `tool_result` block (live, replayed or caught up alike)."""
    data: ToolResult = {
        "message_id": message_id,
        "tool_use_id": block["tool_use_id"],
        "name": name,
        "is_error": bool(block.get("is_error")),
        "content": block.get("content"),
    }
    if "declined" in block:
        data["declined"] = block["declined"]
    return TOOL_RESULT, data


def approval_requested(
    turn_id: str,
    tool_use_id: str,
    name: str,
    tool_input: Json,
    preview: Json | None,
    expires_at: str | None,
) -> ApprovalRequestedEvent:
    """A call waits for the user's decision."""
    return APPROVAL_REQUESTED, {
        "turn_id": turn_id,
        "tool_use_id": tool_use_id,
        "name": name,
        "input": tool_input,
        "preview": preview,
        "expires_at": expires_at,
    }


def turn_error(code: str, message: str | None) -> TurnErrorEvent:
    """Why the turn stopped early."""
    return ERROR, {"code": code, "message": message}


def turn_end(turn_id: str, status: TurnStatus) -> TurnEndEvent:
    """The turn's last event."""
    return TURN_END, {"turn_id": turn_id, "status": status}
