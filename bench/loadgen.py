"""The load generator of bench.load: a paced Anthropic upstream and many SSE clients.

Both live in one asyncio process (uvloop) pinned to its own core, so the server under test
has the other core to itself. Each model call is answered like a real one: a tool call
first, then a long text answer whose events are paced at 40/s and carry the time they left
the upstream, so clients measure the latency the server adds to every event they sample.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import uvloop

TOOL_ROUND = {"type": "tool_use", "id": "toolu_bench", "name": "get_account_balances", "input": {}}
STAMP = re.compile(rb'"text":" t(\d+\.\d+)"')


def sse(kind: str, data: dict[str, Any]) -> bytes:
    """One SSE event of the Anthropic wire format."""
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def message_start() -> bytes:
    """The message_start event of a reply."""
    message: dict[str, Any] = {
        "id": "msg_load", "type": "message", "role": "assistant", "model": "bench",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }  # fmt: skip
    return sse("message_start", {"type": "message_start", "message": message})


def block(index: int, content: dict[str, Any]) -> bytes:
    """A content_block_start event."""
    return sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": content},
    )


def stop(stop_reason: str) -> bytes:
    """The end of a block and of the message."""
    return (
        sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        + sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason},
                "usage": {"output_tokens": 9},
            },
        )
        + sse("message_stop", {"type": "message_stop"})
    )


def chunk(data: bytes) -> bytes:
    """One chunk of a chunked HTTP/1.1 body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


class Upstream(asyncio.Protocol):
    """Answers POST /v1/messages: a tool call, then `events` text deltas `delay` apart."""

    events, delay = 1200, 0.025

    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.task: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        head, sep, body = self.buffer.partition(b"\r\n\r\n")
        if not sep:
            return
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
        if len(body) < length:
            return
        asked = json.loads(body[:length])
        self.buffer = body[length:]
        assert self.transport is not None
        # Chunked and kept alive, as the real API answers: clients reuse connections.
        self.transport.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n" + chunk(message_start())
        )
        if not any(
            isinstance(m["content"], list) and m["content"][0].get("type") == "tool_result"
            for m in asked["messages"]
        ):
            self.transport.write(chunk(block(0, TOOL_ROUND) + stop("tool_use")) + b"0\r\n\r\n")
            return
        self.task = asyncio.ensure_future(self.answer())

    async def answer(self) -> None:
        """Pace the text deltas; each carries the monotonic time it was sent."""
        transport = self.transport
        assert transport is not None
        transport.write(chunk(block(0, {"type": "text", "text": ""})))
        due = time.monotonic()
        for _ in range(self.events):
            due += self.delay
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            if transport.is_closing():
                return
            delta = {"type": "text_delta", "text": f" t{time.monotonic():.6f}"}
            event = {"type": "content_block_delta", "index": 0, "delta": delta}
            transport.write(chunk(sse("content_block_delta", event)))
        transport.write(chunk(stop("end_turn")) + b"0\r\n\r\n")


@dataclass
class Stats:
    """What the clients of one load level saw."""

    ttfb: list[float] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)
    window_latency: list[float] = field(default_factory=list)
    events: int = 0
    window_events: int = 0
    completed: int = 0
    errors: int = 0


WINDOW = [0.0, 0.0]  # a steady-state window (monotonic times) in which to count events


async def client(port: int, token: str, question: str, stats: Stats) -> None:
    """POST /api/chat/stream and read the turn to its end, sampling latencies."""
    body = json.dumps({"message": question}).encode()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        sent = time.monotonic()
        writer.write(
            b"POST /api/chat/stream HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\nAuthorization: Bearer " + token.encode()
            + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )  # fmt: skip
        first, ended = True, False
        while chunk := await reader.read(262144):
            now = time.monotonic()
            if first:
                stats.ttfb.append(now - sent)
                first = False
            # The oldest stamp of a read: the event that waited longest.
            steady = WINDOW[0] <= now < WINDOW[1]
            if stamp := STAMP.search(chunk):
                stats.latency.append(now - float(stamp.group(1)))
                if steady:
                    stats.window_latency.append(stats.latency[-1])
            count = chunk.count(b"\nevent: block_delta\n")
            stats.events += count
            if steady:
                stats.window_events += count
            ended = ended or b'"status":"completed"' in chunk
        writer.close()
        if ended:
            stats.completed += 1
        else:
            stats.errors += 1
    except OSError:
        stats.errors += 1


async def level(port: int, token: str, streams: int, ramp: float) -> Stats:
    """Run `streams` turns at once (started over `ramp` seconds); return their stats."""
    stats = Stats()

    async def one(i: int) -> None:
        await asyncio.sleep(ramp * i / streams)
        await client(port, token, f"How are my balances? (#{i})", stats)

    await asyncio.gather(*(one(i) for i in range(streams)))
    return stats


async def serve_upstream(ready: asyncio.Future[int]) -> None:
    """Serve the upstream on a free port; report it."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Upstream, "127.0.0.1", 0, backlog=4096)
    ready.set_result(server.sockets[0].getsockname()[1])
    await server.serve_forever()


async def main_async() -> None:
    """Serve the upstream; on each stdin line `PORT TOKEN STREAMS RAMP START END`, run a
    level (START..END: its steady-state window), print JSON."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[int] = loop.create_future()
    server = asyncio.ensure_future(serve_upstream(ready))
    print(f"http://127.0.0.1:{await ready}", flush=True)
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        port, token, streams, ramp, WINDOW[0], WINDOW[1] = (
            t(v)
            for t, v in zip(
                (str, str, int, float, float, float), line.decode().split(), strict=True
            )
        )
        stats = await level(int(port), token, streams, ramp)
        print(json.dumps(stats.__dict__), flush=True)
    server.cancel()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        Upstream.events = int(sys.argv[1])
    uvloop.run(main_async())
