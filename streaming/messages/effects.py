"""Change records returned by MessageAccumulator.feed()."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BlockDelta",
    "BlockStarted",
    "BlockStopped",
    "Change",
    "MessageDelta",
    "MessageStarted",
    "MessageStopped",
    "StreamError",
    "UnknownEvent",
]


@dataclass(slots=True)
class MessageStarted:
    """A message_start arrived; `message` is the upstream message object."""

    message: dict[str, Any]


@dataclass(slots=True)
class BlockStarted:
    """A content block started; `block` is the upstream content_block as sent."""

    index: int
    block: dict[str, Any]


@dataclass(slots=True)
class BlockDelta:
    """A delta was applied to an open block; `delta` is the upstream object, not a copy."""

    index: int
    delta: dict[str, Any]


@dataclass(slots=True)
class BlockStopped:
    """A block finished; `block` is final in Anthropic format, `error` set if tool input was bad.

    With an error, `raw` is the tool input text as it streamed (the block's input is {}).
    """

    index: int
    block: dict[str, Any]
    error: str | None = None
    raw: str | None = None


@dataclass(slots=True)
class MessageDelta:
    """A message_delta arrived; `usage` is the merged usage so far, `delta` the upstream delta."""

    stop_reason: str | None
    stop_sequence: str | None
    usage: dict[str, Any]
    delta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class MessageStopped:
    """A message_stop arrived."""


@dataclass(slots=True)
class StreamError:
    """An upstream `error` event; `error` is its error object."""

    error: dict[str, Any]


@dataclass(slots=True)
class UnknownEvent:
    """An event that was not understood or did not apply (kept verbatim)."""

    event: dict[str, Any]


Change = (
    MessageStarted
    | BlockStarted
    | BlockDelta
    | BlockStopped
    | MessageDelta
    | MessageStopped
    | StreamError
    | UnknownEvent
)
