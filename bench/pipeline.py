"""CPU per streamed text event, upstream bytes to client frames, against a naive SDK relay.

Run: python -m bench.pipeline. Prints ratios from one run.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from bench.streams import chunked, sdk_client, text_stream
from engine.events.memory import MemoryEventLog
from engine.store.fence import Lease
from engine.turns.round import MessageRound
from streaming.sse import iter_json_events

EVENTS = 20_000


class NullStore:
    """Persistence is per block, not per event: leave it out of the per-event figure."""

    def add_message(self, *args: Any, **kwargs: Any) -> None:
        """Do nothing."""

    def update_message(self, *args: Any, **kwargs: Any) -> None:
        """Do nothing."""


def ours(raw: bytes) -> int:
    """Decode, accumulate, encode once into the log, and drain it as a reader would."""
    log = MemoryEventLog()
    log.open("t", 1)
    position, sent = 0, 0

    def emit(kind: str, data: dict[str, Any]) -> int:
        nonlocal position, sent
        seq = log.append("t", kind, data)
        chunk = log.read("t", position, 0)  # a reader taking each frame as it lands
        assert chunk is not None
        position, sent = chunk.last_seq, sent + len(chunk.frames)
        return seq

    lease = Lease("t", "s", 1)
    MessageRound(NullStore(), emit, lease, threading.Event()).consume(  # type: ignore[arg-type]
        iter_json_events(chunked(raw))
    )
    return sent


def naive_relay(raw: bytes) -> int:
    """What a naive Flask + SDK helper relay does: messages.stream(), json per text event."""

    client = sdk_client(raw)
    sent = 0
    with client.messages.stream(
        model="bench", max_tokens=10, messages=[{"role": "user", "content": "x"}]
    ) as stream:
        for event in stream:
            if event.type == "text":
                sent += len(f"data: {json.dumps({'text': event.text})}\n\n".encode())
    return sent


def main() -> None:
    """Print how many times less CPU per text event we spend than the naive relay."""
    raw = text_stream(EVENTS)
    timings = {}
    for name, fn in (("naive", naive_relay), ("ours", ours)):
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            fn(raw)
            best = min(best, time.process_time() - start)
        timings[name] = best
    print(f"{EVENTS} text deltas, upstream bytes to client frames")
    print(
        f"naive SDK-helper relay / ours (CPU per event): {timings['naive'] / timings['ours']:.1f}x"
    )
    per_event = timings["ours"] / EVENTS * 1e6
    print(f"ours, in process without sockets: {per_event / 50:.2f}x the 50 us per-event budget")


if __name__ == "__main__":
    main()
