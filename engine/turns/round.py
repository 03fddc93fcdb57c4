"""Stream one model message: accumulate it, emit client events, persist at block ends.

The handlers are generators that yield each database write they need before going on:
the thread driver (`consume`) runs the writes in place, the event-loop driver hands them
to a thread pool and awaits them, so both keep "stored before it is shown" alike.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from engine.errors import LeaseLost, TurnCancelled, UpstreamInterrupted
from engine.store.fence import Lease
from engine.store.messages import MessageStore
from engine.turns.tool_ids import UniqueIds
from models import new_id
from streaming import protocol as P
from streaming.accumulator import MessageAccumulator
from streaming.changes import (
    BlockDelta,
    BlockStarted,
    BlockStopped,
    MessageStarted,
    StreamError,
)

Emit = Callable[[str, dict[str, Any]], int]
Write = Callable[[], None]
log = logging.getLogger(__name__)


@dataclass
class RoundResult:
    """The stored assistant message of one round."""

    message_id: str
    content: list[dict[str, Any]]
    stop_reason: str | None
    tool_errors: dict[str, str] = field(default_factory=dict)
    usage: dict[str, Any] | None = None


class MessageRound:
    """Turns one upstream event stream into client events and stored message rows."""

    def __init__(
        self,
        store: MessageStore,
        emit: Emit,
        lease: Lease,
        cancelled: threading.Event,
        used_tool_ids: set[str] | None = None,
    ) -> None:
        self.store, self.emit, self.cancelled, self.lease = store, emit, cancelled, lease
        # Tool ids the session's history already holds: a reused one is a new call.
        self.ids = UniqueIds(frozenset(used_tool_ids or ()))
        # Final writes that failed: the turn's end retries them.
        self.unsettled: dict[str, dict[str, Any]] = {}
        self.acc = MessageAccumulator()
        self.result: RoundResult | None = None
        self.message_id: str | None = None
        self.block_ids: dict[int, str] = {}
        self.open_blocks: dict[int, str] = {}
        self.tool_errors: dict[str, str] = {}
        # Read by the watchdog thread: when the last non-ping event arrived.
        self.last_activity = time.monotonic()
        self.saw_content = False

    def consume(self, events: Iterable[dict[str, Any]]) -> RoundResult:
        """Read the whole stream, writing in place; raise on cancel or an interrupted stream."""
        for event in events:
            for write in self.feed(event):
                write()
        for write in self.finish():
            write()
        assert self.result is not None
        return self.result

    def feed(self, event: dict[str, Any]) -> Iterator[Write]:
        """Apply one upstream event; yield each write that must be stored before going on."""
        if self.cancelled.is_set():
            raise TurnCancelled()
        if event.get("type") != "ping":
            self.last_activity = time.monotonic()
        for change in self.acc.feed(event):
            # The delta branch runs per token: keep it first and allocation-light.
            if type(change) is BlockDelta:
                self.emit(
                    P.BLOCK_DELTA,
                    {
                        "message_id": self.message_id,
                        "block_id": self.block_ids[change.index],
                        "delta": change.delta,
                    },
                )
            elif type(change) is BlockStarted:
                self._block_started(change)
            elif type(change) is BlockStopped:
                yield from self._block_stopped(change)
            elif type(change) is MessageStarted:
                yield from self._message_started(change)
            elif type(change) is StreamError:
                err = change.error or {}
                raise UpstreamInterrupted(
                    str(err.get("type") or "upstream_error"),
                    str(err.get("message") or "The model service reported an error."),
                )

    def finish(self) -> Iterator[Write]:
        """End of the stream: yield the final write; then `result` holds the message."""
        if self.cancelled.is_set():
            raise TurnCancelled()
        if self.message_id is None or self.acc.stop_reason is None:
            raise UpstreamInterrupted("stream_ended", "The model stream ended before the reply.")
        yield from self._finish()

    def _message_started(self, change: MessageStarted) -> Iterator[Write]:
        if self.message_id is not None:
            # A repeated message_start restarts the message: drop what the first one showed.
            yield from self._discard("restarted", 0)
        msg = change.message
        message_id = new_id("msg")
        self.ids.reset()
        yield partial(
            self.store.add_message,
            self.lease,
            message_id,
            "assistant",
            [],
            "streaming",
            model=msg.get("model"),
            upstream_id=msg.get("id"),
        )
        # Only a stored message counts as started, so a failed insert is never "discarded".
        self.message_id = message_id
        self.block_ids, self.open_blocks = {}, {}
        self.emit(
            P.MESSAGE_START,
            {"message_id": message_id, "role": "assistant", "model": msg.get("model")},
        )

    def _block_started(self, change: BlockStarted) -> None:
        self.saw_content = True
        block_id = f"{self.message_id}.{change.index}"
        self.block_ids[change.index] = self.open_blocks[change.index] = block_id
        block, key, fresh = self.ids.fix(change.block)
        if key is not None:
            self.acc.set_field(change.index, key, fresh)
        data: dict[str, Any] = {
            "message_id": self.message_id,
            "block_id": block_id,
            "index": change.index,
            "type": block.get("type"),
            "block": block,
        }
        if "id" in block and "name" in block:
            data["tool_use_id"], data["name"] = block["id"], block["name"]
        self.emit(P.BLOCK_START, data)

    def _block_stopped(self, change: BlockStopped) -> Iterator[Write]:
        block = change.block
        if change.error and block.get("type") == "tool_use":
            self.tool_errors[block["id"]] = change.error
        # Stored before block_end is sent; if the write fails the block stays open and is
        # ended as incomplete by discard().
        content = self.acc.message()["content"]
        yield partial(self.store.update_message, self.lease, self.message_id, content=content)
        self.open_blocks.pop(change.index, None)
        data: dict[str, Any] = {
            "message_id": self.message_id,
            "block_id": self.block_ids[change.index],
            "index": change.index,
            "type": block.get("type"),
        }
        for key in ("input", "signature", "citations"):
            if key in block:
                data[key] = block[key]
        if change.error:
            data["error"] = change.error
        self.emit(P.BLOCK_END, data)

    def _finish(self) -> Iterator[Write]:
        message = self.acc.message()
        content = message["content"]
        cut = self._end_open_blocks()
        yield partial(
            self.store.update_message,
            self.lease,
            self.message_id,
            content=content,
            partial_content=cut or None,
            status="incomplete" if cut else "complete",
            stop_reason=message.get("stop_reason"),
            usage=message.get("usage"),
        )
        self.emit(
            P.MESSAGE_END,
            {
                "message_id": self.message_id,
                "stop_reason": message.get("stop_reason"),
                "usage": message.get("usage"),
            },
        )
        self.result = RoundResult(
            self.message_id,
            content,
            message.get("stop_reason"),
            self.tool_errors,
            message.get("usage"),
        )

    def _end_open_blocks(self) -> list[dict[str, Any]]:
        """Send block_end for every open block (marked incomplete); return their snapshots."""
        snapshots = dict(self.acc.incomplete_blocks())
        partial = []
        for index, block_id in sorted(self.open_blocks.items()):
            snapshot = snapshots.get(index, {})
            partial.append({"index": index, **snapshot})
            self.emit(
                P.BLOCK_END,
                {
                    "message_id": self.message_id,
                    "block_id": block_id,
                    "index": index,
                    "type": snapshot.get("type"),
                    "incomplete": True,
                },
            )
        self.open_blocks = {}
        return partial

    def abort(self, reason: str) -> None:
        """End a message cut short (cancel, failure): keep complete blocks, mark the rest."""
        message_id = self.message_id
        if message_id is None:
            return
        partial = self._end_open_blocks()
        message = self.acc.message()
        self.message_id = None
        # Events first: the client's view must close even if the database is failing.
        self.emit(
            P.MESSAGE_END,
            {
                "message_id": message_id,
                "stop_reason": reason,
                "usage": message.get("usage"),
                "incomplete": True,
            },
        )
        self._write(
            message_id,
            content=message["content"],
            partial_content=partial or None,
            status="incomplete",
            stop_reason=reason,
            usage=message.get("usage"),
        )

    def discard(self, reason: str, attempt: int = 0) -> None:
        """Drop the message in flight entirely: the client removes it, history skips it."""
        for write in self._discard(reason, attempt):
            write()

    def _discard(self, reason: str, attempt: int) -> Iterator[Write]:
        message_id = self.message_id
        if message_id is None:
            return
        self._end_open_blocks()
        self.message_id = None
        self.emit(
            P.MESSAGE_DISCARDED, {"message_id": message_id, "reason": reason, "attempt": attempt}
        )
        # The usage stays: a failed attempt's input was billed all the same.
        yield partial(self._write, message_id, status="discarded", usage=self.acc.usage or None)

    def _write(self, message_id: str, **fields: Any) -> None:
        try:
            self.store.update_message(self.lease, message_id, **fields)
        except LeaseLost:
            raise
        except Exception:
            log.exception("could not store the end of message %s; retried at turn end", message_id)
            self.unsettled[message_id] = fields
