"""Readers in the event loop following Redis streams: one shared XREAD per process.

A reader behind the stream takes what is there (XRANGE); a caught-up one just waits, and
one task per process follows every awaited stream with a single blocking XREAD, handing
each batch of new entries to the readers waiting there: no Redis round trip per reader per
event.
"""

from __future__ import annotations

import asyncio
import logging
from typing import cast

import redis.asyncio as aioredis
from redis.typing import KeyT, StreamIdT, StreamRangeResponse, XReadResponse

from config import Timings
from domain.backoff import Backoff
from engine.events.log import Chunk, starts_epoch

FIELD, END = b"f", b"end"
log = logging.getLogger(__name__)
Entries = list[tuple[bytes, dict[bytes, bytes]]]


def entries_of(reply: StreamRangeResponse | None) -> Entries:
    """A stream's entries as XRANGE gives them to this client."""
    # Its client decodes no responses: every entry id and field is bytes.
    return cast(Entries, reply or [])


def _by_stream(reply: XReadResponse) -> list[tuple[str, Entries]]:
    """XREAD's reply as (stream key, entries) pairs."""
    # RESP2 (this client's protocol) gives one [key, entries] list per stream, all in bytes.
    pairs = cast(list[tuple[bytes | str, Entries]], reply or [])
    return [(key.decode() if isinstance(key, bytes) else key, entries) for key, entries in pairs]


def chunk_of(entries: Entries, after: int) -> Chunk | None:
    """The chunk these entries (all after `after`) make; None if one is missing."""
    frames: list[bytes] = []
    last = after
    for entry_id, fields in entries:
        seq = int(entry_id.split(b"-")[1])
        if END in fields:
            if int(fields[END]) != last:
                return None  # frames missing before the end: the archive has them all
            return Chunk(b"".join(frames), last, True)
        if seq != last + 1 and not (seq > last and starts_epoch(seq)):
            # A gap (a lost write): never hand out events out of sequence. A new epoch's
            # first event (turn_start with reset) follows any earlier id.
            return None
        frames.append(fields[FIELD])
        last = seq
    return Chunk(b"".join(frames), last, False)


class RedisFollower:
    """Serves every loop reader of one process from Redis Streams."""

    def __init__(self, client: aioredis.Redis, timings: Timings) -> None:
        self._redis, self.timings = client, timings
        # stream key -> {waiter: position it waits after}
        self._waiting: dict[str, dict[asyncio.Future[Entries], int]] = {}
        self._task: asyncio.Task[None] | None = None
        # The last sequence seen per stream: a reader at or past it waits without asking.
        self._tail: dict[str, int] = {}

    async def read(self, key: str, after: int, timeout: float) -> Chunk | None:
        """Frames after `after` in stream `key`, waiting up to `timeout` for some."""
        if after < self._tail.get(key, after + 1):
            # Behind what was seen (or never followed): take what is there at once.
            behind = await self._redis.xrange(key, min=f"0-{after + 1}", count=10_000)
            if behind:
                return self._seen(key, entries_of(behind), after)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Entries] = loop.create_future()
        self._waiting.setdefault(key, {})[waiter] = after
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._follow())
        timer = loop.call_later(timeout, _expire, waiter)
        try:
            entries = await waiter
        finally:
            timer.cancel()
            waiting = self._waiting.get(key)
            if waiting is not None:
                waiting.pop(waiter, None)
                if not waiting:
                    del self._waiting[key]
        return self._seen(key, entries, after) if entries else Chunk(b"", after, False)

    def _seen(self, key: str, entries: Entries, after: int) -> Chunk | None:
        chunk = chunk_of(entries, after)
        if chunk is not None:
            if len(self._tail) > 100_000:
                self._tail.clear()  # a hint only: a forgotten stream is just read again
            self._tail[key] = chunk.last_seq
        return chunk

    async def close(self) -> None:
        """Stop following."""
        if self._task is not None:
            self._task.cancel()

    async def _follow(self) -> None:
        t = self.timings
        block = max(1, round(t.log_block * 1000))
        backoff = Backoff(t.log_backoff_base, t.log_backoff_cap)
        while self._waiting:
            # Each key from the lowest position a reader waits at.
            streams: dict[KeyT, StreamIdT] = {
                k: f"0-{min(w.values())}" for k, w in self._waiting.items() if w
            }
            try:
                reply = await self._redis.xread(streams, count=10_000, block=block)
            except Exception as err:
                log.warning("following Redis streams failed (%s); retrying", err)
                await asyncio.sleep(backoff.next())
                continue
            backoff.reset()
            for key, entries in _by_stream(reply):
                self._hand_over(key, entries)
            if reply:
                # Wait a little so the next XREAD carries several streams' entries.
                await asyncio.sleep(t.log_gather)

    def _hand_over(self, key: str, entries: Entries) -> None:
        first = int(entries[0][0].split(b"-")[1])
        for waiter, after in list(self._waiting.get(key, {}).items()):
            if waiter.done():
                continue
            # Entries start right after this reader's position, or it re-reads them itself.
            if first == after + 1:
                waiter.set_result(entries)
            else:
                skip = [e for e in entries if int(e[0].split(b"-")[1]) > after]
                waiter.set_result(skip)


def _expire(waiter: asyncio.Future[Entries]) -> None:
    if not waiter.done():
        waiter.set_result([])
