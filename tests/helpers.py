"""Test helpers: a scripted model client and a checker of the client event protocol."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any

from engine.events.log import split_frames, starts_epoch
from engine.upstream.catalog import DEMO
from engine.upstream.shape import shape_for
from streaming.wire.protocol import decode_stream
from streaming.wire.sse import iter_json_events
from streaming.wire.view import view_of

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "transcripts"


def transcript_events(name: str) -> list[dict[str, Any]]:
    """Return the decoded events of a transcript in ../shared/transcripts."""
    return list(iter_json_events([(TRANSCRIPTS / name).read_bytes()]))


# Hand-made transcripts shaped like the API's, for streams no recording holds.
OWN_TRANSCRIPTS = Path(__file__).resolve().parent / "streaming" / "transcripts"


def own_transcript_events(name: str) -> list[dict[str, Any]]:
    """Return the decoded events of a transcript in tests/streaming/transcripts."""
    return list(iter_json_events([(OWN_TRANSCRIPTS / name).read_bytes()]))


async def _play(events: list[Any]) -> AsyncIterator[bytes]:
    for event in events:
        await asyncio.sleep(0)  # each event is a read of its own, as from a socket
        if isinstance(event, BaseException):
            raise event
        if isinstance(event, bytes):
            yield event  # raw stream bytes, cut wherever the test chose
            continue
        yield b"event: %s\ndata: %s\n\n" % (event["type"].encode(), json.dumps(event).encode())


class ScriptedModel:
    """A model client that plays one scripted event list per call and records requests.

    A script may be an Exception, raised when the call opens (like an HTTP error status);
    an Exception among a script's events is raised at that point of the stream. It takes
    requests as the offline demo model's row does (system messages, preserved thinking):
    `requests` holds each request's messages less its `role: "system"` notes, `sent` each
    whole request (its messages and the conversation's part: system, binding, betas).
    """

    model, max_tokens = "scripted", 4096
    system: str | None = None
    shape = shape_for(DEMO.name, "adaptive", "", "updates")

    def __init__(self, scripts: list[Any], today: Callable[[], date] = date.today) -> None:
        self.scripts = list(scripts)
        self.today = today
        self.requests: list[list[dict[str, Any]]] = []
        self.sent: list[dict[str, Any]] = []

    @asynccontextmanager
    async def open(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], **shape: Any
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Yield the next script's events as SSE bytes."""
        copied = json.loads(json.dumps(messages))
        self.sent.append({"messages": copied, "tools": tools, **shape})
        self.requests.append([m for m in copied if m.get("role") != "system"])
        if not self.scripts:
            raise AssertionError("the model was called more times than scripted")
        script = self.scripts.pop(0)
        if isinstance(script, BaseException):
            raise script
        yield _play(script)

    async def close(self) -> None:
        """Nothing to close."""


def assert_well_formed(events: list[tuple[int, str, dict[str, Any]]]) -> None:
    """Check the protocol rules: ids 1..n, starts before deltas before ends, turn_end last.

    Ids go up by one, except to a new epoch's first id (a log rebuilt after it was lost),
    which is a `turn_start` with `reset`.
    """
    assert_ids(events)
    assert events[0][1] == "turn_start"
    assert events[-1][1] == "turn_end"
    assert sum(1 for _, t, _ in events if t == "turn_end") == 1
    open_messages: set[str] = set()
    open_blocks: set[str] = set()
    for _, kind, data in events:
        if kind == "message_start":
            open_messages.add(data["message_id"])
        elif kind in ("message_end", "message_discarded"):
            assert data["message_id"] in open_messages, data
            assert not any(b.startswith(data["message_id"] + ".") for b in open_blocks), data
            open_messages.discard(data["message_id"])
        elif kind == "block_start":
            assert data["message_id"] in open_messages
            assert data["block_id"] not in open_blocks
            open_blocks.add(data["block_id"])
        elif kind == "block_delta":
            assert data["block_id"] in open_blocks, data
        elif kind == "block_end":
            assert data["block_id"] in open_blocks, data
            open_blocks.discard(data["block_id"])
    assert not open_messages and not open_blocks, (open_messages, open_blocks)


def assert_ids(events: list[tuple[int, str, dict[str, Any]]]) -> None:
    """Ids 1, 2, ... up by one, or up to a new epoch's first id at a reset turn_start."""
    last = 0
    for seq, kind, data in events:
        if seq != last + 1:
            assert seq > last and starts_epoch(seq), (last, seq)
            assert kind == "turn_start" and data.get("reset"), (seq, kind, data)
        last = seq


def assert_client_saw(stitched: bytes, fresh: bytes, answer: str) -> int:
    """What a client read across drops shows the stored answer, spliced nowhere.

    `fresh` is the turn's whole log read afresh. Without a reset, the client read exactly
    it; after resets (the live log was lost and rebuilt), what it read from its last reset
    on is exactly it, and every earlier part only went up one id at a time. Returns the
    number of resets the client saw.
    """
    events = decode_stream(stitched)
    assert_ids(events)
    resets = [i for i, (_, kind, data) in enumerate(events) if kind == "turn_start" and i]
    resets = [i for i in resets if events[i][2].get("reset")]
    last = stitched
    if resets:
        cut = resets[-1]
        last = b"".join(split_frames(stitched)[cut:])
    assert last == fresh, "the client's stream differs from the turn's log"
    assert_well_formed(decode_stream(fresh))
    assert view_of(stitched).shown_text() == answer
    return len(resets)


def text_of(events: list[tuple[int, str, dict[str, Any]]]) -> str:
    """Concatenate the text deltas of the messages that were not discarded."""
    discarded = {d["message_id"] for _, t, d in events if t == "message_discarded"}
    return "".join(
        d["delta"].get("text", "")
        for _, t, d in events
        if t == "block_delta" and d["message_id"] not in discarded
    )
