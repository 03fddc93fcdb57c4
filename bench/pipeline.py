"""CPU per streamed text event, upstream bytes to client frames, against a naive SDK relay.

Run: python -m bench.pipeline. Prints ratios from one run.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from bench.streams import chunked, sdk_client, text_stream
from config import Timings
from engine.events.memory import MemoryEventLog
from engine.store.fence import Lease
from engine.turns.outbox import Outbox
from engine.turns.round import MessageRound
from streaming.wire.sse import JSONEvents

EVENTS = 20_000


class NullStore:
    """Persistence is per block, not per event: leave it out of the per-event figure."""

    def add_message(self, *args: Any, **kwargs: Any) -> None:
        """Do nothing."""

    def update_message(self, *args: Any, **kwargs: Any) -> None:
        """Do nothing."""

    async def durable(self, write: Any) -> None:
        """Store nothing."""


def ours(raw: bytes) -> int:
    """Decode, accumulate, encode once into the log, and drain it as a reader would."""

    async def run() -> int:
        log, store = MemoryEventLog(None, Timings().log_retain), NullStore()
        log.open("t", 1)
        lease = Lease("t", "s", 1)
        outbox = Outbox(log, store, lease)  # type: ignore[arg-type]
        current = MessageRound(store, outbox, lease)  # type: ignore[arg-type]
        decoder, position, sent = JSONEvents(), 0, 0
        for chunk in chunked(raw):
            for event in decoder.feed(chunk):
                current.feed(event)
            await outbox.settled()
            read = await log.read("t", position, 0)  # a reader taking each batch as it lands
            assert read is not None
            position, sent = read.last_seq, sent + len(read.frames)
        current.finish()
        await outbox.settled()
        return sent

    return asyncio.run(run())


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
