"""One model message as it streams: accumulate it, queue client events and row writes.

A MessageRound is plain code over the accumulator: it turns each upstream event into
client events and the writes that must be stored before them, in order, through the
turn's outbox (engine/turns/outbox.py). It never waits; the outbox does the storing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from domain.errors import UpstreamInterrupted
from engine.store.fence import Lease
from engine.store.messages import MessageStore
from engine.turns.outbox import Outbox
from engine.turns.tool_ids import UniqueIds
from engine.turns.tools import BadInput
from models import new_id
from streaming.messages.accumulator import MessageAccumulator
from streaming.messages.effects import (
    BlockDelta,
    BlockStarted,
    BlockStopped,
    MessageStarted,
    StreamError,
)
from streaming.wire import events as E


@dataclass
class RoundResult:
    """The stored assistant message of one round."""

    message_id: str
    content: list[dict[str, Any]]
    stop_reason: str | None
    tool_errors: dict[str, BadInput] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    # Thinking blocks the API dropped from the request (its input_transformations).
    dropped: int = 0
    # The notes sent right before it (stored with it: engine/upstream/conversation.py).
    preamble: list[dict[str, Any]] | None = None

    def as_history(self) -> dict[str, Any]:
        """The message as the history holds it (the next round sends it, notes first)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        message["id"] = self.message_id
        if self.preamble:
            message["preamble"] = self.preamble
        return message


class MessageRound:
    """Turns one upstream event stream into client events and stored message rows."""

    def __init__(
        self,
        store: MessageStore,
        outbox: Outbox,
        lease: Lease,
        used_tool_ids: set[str] | None = None,
        preamble: list[dict[str, Any]] | None = None,
    ) -> None:
        self.store, self.outbox, self.lease = store, outbox, lease
        # The notes sent at the end of the request (a date, tool changes): stored with the
        # reply, so later requests send them before it again.
        self.preamble = preamble or None
        # What the API changed of the request before the model read it (message_start).
        self.transformations: list[dict[str, Any]] = []
        # Tool ids the session's history already holds: a reused one is a new call.
        self.ids = UniqueIds(frozenset(used_tool_ids or ()))
        self.acc = MessageAccumulator()
        self.message_id: str | None = None
        # What the upstream called its message, for traces.
        self.response_model: str | None = None
        self.response_id: str | None = None
        self.block_ids: dict[int, str] = {}
        self.open_blocks: dict[int, str] = {}
        self.tool_errors: dict[str, BadInput] = {}
        # Tool calls the output limit left open, ended here so the history keeps them.
        self.cutting: set[int] = set()
        # Read by the stall watch: when the last non-ping event arrived.
        self.last_activity = time.monotonic()
        self.saw_content = False

    def feed(self, event: dict[str, Any]) -> None:
        """Apply one upstream event; raise UpstreamInterrupted on an error event."""
        if event.get("type") != "ping":
            self.last_activity = time.monotonic()
        emit = self.outbox.emit
        for change in self.acc.feed(event):
            # The delta branch runs per token: keep it first and allocation-light.
            if type(change) is BlockDelta:
                emit(E.block_delta(self._current(), self.block_ids[change.index], change.delta))
            elif type(change) is BlockStarted:
                self._block_started(change)
            elif type(change) is BlockStopped:
                self._block_stopped(change)
            elif type(change) is MessageStarted:
                self._message_started(change)
            elif type(change) is StreamError:
                err = change.error or {}
                raise UpstreamInterrupted(
                    str(err.get("type") or "upstream_error"),
                    str(err.get("message") or "The model service reported an error."),
                )

    def finish(self) -> RoundResult:
        """End of the stream: queue the final write and return the message."""
        if self.message_id is None or self.acc.stop_reason is None:
            raise UpstreamInterrupted("stream_ended", "The model stream ended before the reply.")
        if self.acc.stop_reason == "max_tokens":
            self._cut_tools()
        message = self.acc.message()
        content = self._with_input_errors(message["content"])
        cut = self._end_open_blocks()
        usage = message.get("usage")
        management = message.get("context_management")
        if self.transformations:
            # Blocks the API dropped are recorded with the usage, which is what they change.
            usage = {**(usage or {}), "input_transformations": self.transformations}
        end = E.message_end(
            self.message_id, message.get("stop_reason"), usage, context_management=management
        )
        if management:
            # Recorded with the usage: the message rows have no column of their own for it.
            usage = {**(usage or {}), "context_management": management}
        self.outbox.write(
            partial(
                self.store.update_message,
                self.lease,
                self.message_id,
                content=content,
                partial_content=cut or None,
                status="incomplete" if cut else "complete",
                stop_reason=message.get("stop_reason"),
                usage=usage,
            )
        )
        self.outbox.emit(end)
        dropped = sum(1 for t in self.transformations if t.get("type") == "thinking_dropped")
        return RoundResult(
            self.message_id,
            content,
            message.get("stop_reason"),
            self.tool_errors,
            usage,
            dropped,
            self.preamble,
        )

    def abort(self, reason: str) -> None:
        """End a message cut short (cancel, failure): keep complete blocks, mark the rest."""
        message_id = self.message_id
        if message_id is None:
            return
        partial_blocks = self._end_open_blocks()
        message = self.acc.message()
        self.message_id = None
        self.outbox.emit(E.message_end(message_id, reason, message.get("usage"), incomplete=True))
        self.outbox.write(
            partial(
                self.store.update_message,
                self.lease,
                message_id,
                content=message["content"],
                partial_content=partial_blocks or None,
                status="incomplete",
                stop_reason=reason,
                usage=message.get("usage"),
            )
        )

    def discard(self, reason: str, attempt: int = 0) -> None:
        """Drop the message in flight entirely: the client removes it, history skips it."""
        message_id = self.message_id
        if message_id is None:
            return
        self._end_open_blocks()
        self.message_id = None
        self.outbox.emit(E.message_discarded(message_id, reason, attempt))
        # The usage stays: a failed attempt's input was billed all the same.
        usage = self.acc.usage or None
        self.outbox.write(partial(self.store.discard, self.lease, message_id, usage))

    def _message_started(self, change: MessageStarted) -> None:
        if self.message_id is not None:
            # A repeated message_start restarts the message: drop what the first one showed.
            self.discard("restarted", 0)
        msg = change.message
        self.response_model, self.response_id = msg.get("model"), msg.get("id")
        found = msg.get("input_transformations")
        self.transformations = [t for t in found if isinstance(t, dict)] if found else []
        message_id = new_id("msg")
        self.ids.reset()
        notes = {"preamble": self.preamble} if self.preamble else {}
        self.outbox.write(
            partial(
                self.store.add_message,
                self.lease,
                message_id,
                "assistant",
                [],
                "streaming",
                model=msg.get("model"),
                upstream_id=msg.get("id"),
                **notes,
            )
        )
        self.message_id = message_id
        self.block_ids, self.open_blocks, self.cutting = {}, {}, set()
        self.outbox.emit(E.message_start(message_id, msg.get("model")))

    def _block_started(self, change: BlockStarted) -> None:
        self.saw_content = True
        message_id = self._current()
        block_id = f"{message_id}.{change.index}"
        self.block_ids[change.index] = self.open_blocks[change.index] = block_id
        block, key, fresh = self.ids.fix(change.block)
        if key is not None:
            self.acc.set_field(change.index, key, fresh)
        self.outbox.emit(E.block_start(message_id, block_id, change.index, block))

    def _block_stopped(self, change: BlockStopped) -> None:
        block = change.block
        if change.error and block.get("type") == "tool_use":
            self.tool_errors[block["id"]] = BadInput(change.error, change.raw or "")
        # Stored before block_end is sent.
        message_id = self._current()
        content = self.acc.message()["content"]
        self.outbox.write(
            partial(self.store.update_message, self.lease, message_id, content=content)
        )
        self.open_blocks.pop(change.index, None)
        block_id = self.block_ids[change.index]
        self.outbox.emit(
            E.block_end(
                message_id,
                block_id,
                change.index,
                block,
                error=change.error or None,
                incomplete=change.index in self.cutting,
            )
        )
        note = block.get("thinking") if block.get("type") == "thinking" else None
        if note and isinstance(note, str):
            # Once per block, at its end: a progress note is a status line, not thinking.
            self.outbox.emit(E.progress(message_id, block_id, note))

    def _cut_tools(self) -> None:
        """At max_tokens: end the tool calls left open, and mark cut the calls the limit cut.

        A cut call stays in the history with input {} and gets an is_error result, so the
        model reads why and may call again; dropping it would hide what it tried.
        """
        for index, snapshot in self.acc.incomplete_blocks():
            if snapshot.get("type") != "tool_use" or index not in self.open_blocks:
                continue
            self.cutting.add(index)
            self.feed({"type": "content_block_stop", "index": index})
            bad = self.tool_errors.get(snapshot.get("id", ""))
            problem = bad.problem if bad is not None else "the call never ended"
            raw = str(snapshot.get("partial_json") or "")
            self.tool_errors[snapshot.get("id", "")] = BadInput(problem, raw, cut=True)
        # A call ended with bad input as the message's last block is what the limit cut.
        content = self.acc.message()["content"]
        last = content[-1] if content else {}
        bad = self.tool_errors.get(last.get("id", "")) if last.get("type") == "tool_use" else None
        if bad is not None and not bad.cut:
            self.tool_errors[last["id"]] = replace(bad, cut=True)

    def _with_input_errors(self, content: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Record each unusable input on its stored block, so a takeover refuses it too."""
        if not self.tool_errors:
            return content
        return [
            {**block, "input_error": self.tool_errors[block["id"]].stored()}
            if block.get("type") == "tool_use" and block.get("id") in self.tool_errors
            else block
            for block in content
        ]

    def _current(self) -> str:
        """The id of the message streaming now (upstream sends no block outside a message)."""
        if self.message_id is None:
            raise UpstreamInterrupted("invalid_stream", "The model sent a block outside a message.")
        return self.message_id

    def _end_open_blocks(self) -> list[dict[str, Any]]:
        """Send block_end for every open block (marked incomplete); return their snapshots."""
        if not self.open_blocks:
            return []
        message_id = self._current()
        snapshots = dict(self.acc.incomplete_blocks())
        partial_blocks = []
        for index, block_id in sorted(self.open_blocks.items()):
            snapshot = snapshots.get(index, {})
            partial_blocks.append({"index": index, **snapshot})
            # Only its type: what the cut block held is stored, not sent.
            kind = {"type": snapshot.get("type")}
            self.outbox.emit(E.block_end(message_id, block_id, index, kind, incomplete=True))
        self.open_blocks = {}
        return partial_blocks
