"""The HTTP side of FaultyUpstream: request checks and each fault at the socket level."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import random
import socket
import socketserver
import struct
import termios
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from demo_model.binding import Refused, betas_of, check
from demo_model.brain import respond
from demo_model.wire import encode_reply
from tests.faults.kinds import (
    PING,
    RETRYABLE,
    CutToolAtMaxTokens,
    ErrorAfter,
    Fault,
    Normal,
    ResetAfter,
    StallAfter,
    Status,
    Transcript,
    cut_at_max_tokens,
    error_body,
    error_event,
    split_events,
)

if TYPE_CHECKING:
    from tests.faults.upstream import FaultyUpstream

PING_EVERY = 0.2


def digest(body: dict[str, Any]) -> bytes:
    """Return the hash that seeds a request's reply."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).digest()


def expected_reply(body: dict[str, Any]) -> list[bytes]:
    """Return the SSE events of the normal (fault-free) reply to `body`."""
    seed = digest(body)
    reply = respond(body)
    return list(
        encode_reply(
            "msg_fault_" + seed.hex()[:20],
            str(body.get("model", "demo")),
            reply.blocks,
            reply.stop_reason,
            max(1, len(json.dumps(body)) // 4),
            random.Random(seed),
        )
    )


class Server(ThreadingHTTPServer):
    """A threading HTTP server bound to a FaultyUpstream."""

    daemon_threads = True
    upstream: FaultyUpstream

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup we have no use for.
        socketserver.TCPServer.server_bind(self)
        host, self.server_port = self.server_address[:2]
        self.server_name = str(host)


class _Disconnected(Exception):
    """The client went away or the upstream is closing."""


class Handler(BaseHTTPRequestHandler):
    """Serves one connection's requests, each with the fault its upstream picks."""

    protocol_version = "HTTP/1.1"
    timeout = 30  # a forgotten keep-alive connection must not pin a thread forever
    server: Server

    def setup(self) -> None:
        super().setup()
        if not self.server.upstream._register(self.connection):
            shutdown(self.connection)

    def handle(self) -> None:
        # Clients drop pooled keep-alive connections whenever they like; that is no error.
        with contextlib.suppress(OSError):
            super().handle()

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.upstream._unregister(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        try:
            self._post()
        except (_Disconnected, OSError):
            self.close_connection = True

    def _post(self) -> None:
        up = self.server.upstream
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.split("?")[0] != "/v1/messages":
            self._json(404, error_body("not_found_error", "req_fault_bad", f"No {self.path}."))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        betas = betas_of(self.headers)
        problem, events = _answer(body)
        if problem is None:
            problem = _bound(body, betas)
        if problem:
            if isinstance(body, dict):
                up._reject(body, betas, problem)
            self._json(400, error_body("invalid_request_error", "req_fault_bad", problem))
            return
        index, fault = up._admit(body, betas)
        self._serve(fault, body, events, f"req_fault_{index:04d}_{digest(body).hex()[:12]}")

    def _serve(
        self, fault: Fault, body: dict[str, Any], events: list[bytes], request_id: str
    ) -> None:
        if isinstance(fault, Status):
            headers = {"x-should-retry": "true"} if _retryable(fault.code) else {}
            if fault.retry_after is not None:
                headers["retry-after"] = f"{fault.retry_after:g}"
            body = error_body(fault.api_error_type(), request_id, fault.message)
            self._json(fault.code, body, headers)
            return
        if isinstance(fault, Transcript):
            self._stream(request_id, split_events(fault.data()), delay=fault.delay)
            return
        if isinstance(fault, Normal):
            self._stream(request_id, events, delay=fault.delay)
        elif isinstance(fault, CutToolAtMaxTokens):
            self._stream(request_id, cut_at_max_tokens(events))
        elif isinstance(fault, ErrorAfter):
            self._stream(request_id, [*events[: fault.n], error_event(fault.error_type)])
        elif isinstance(fault, ResetAfter):
            self._stream(request_id, events[: fault.n], delay=fault.delay, end=False)
            self._reset()
        elif isinstance(fault, StallAfter):
            self._stream(request_id, events[: fault.n], end=False)
            self._stall(fault)
            self.close_connection = True
        else:
            raise TypeError(f"unknown fault {fault!r}")

    def _stream(
        self, request_id: str, events: list[bytes], delay: float = 0.0, end: bool = True
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", request_id)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for k, event in enumerate(events):
            if k and delay and self.server.upstream._closing.wait(delay):
                raise _Disconnected
            self._chunk(event)
        if end:
            self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        # One HTTP chunk per SSE event, written straight to the socket (wfile is unbuffered).
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stall(self, fault: StallAfter) -> None:
        self.server.upstream.stalling.set()
        closing = self.server.upstream._closing
        deadline = time.monotonic() + fault.seconds
        while (left := deadline - time.monotonic()) > 0:
            if closing.wait(min(left, PING_EVERY) if fault.pings else left):
                raise _Disconnected
            if fault.pings and deadline - time.monotonic() > 0:
                self._chunk(PING)

    def _reset(self) -> None:
        conn = self.connection
        _drain(conn)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # rfile holds a reference to the socket; both must go for close() to send the RST.
        self.rfile.close()
        conn.close()
        self.close_connection = True

    def _json(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", body.get("request_id", "req_fault"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _answer(body: Any) -> tuple[str | None, list[bytes]]:
    """What is wrong with a request, or nothing and the events of its normal reply (the demo
    model answers every request once: the check is the answer)."""
    if not isinstance(body, dict):
        return "The request body is not a JSON object.", []
    if body.get("stream") is not True:
        return "FaultyUpstream only serves streaming requests (`stream: true`).", []
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return "`messages` must be a list of message objects.", []
    try:
        return None, expected_reply(body)
    except Exception as exc:
        return f"The demo model cannot answer this request: {exc!r}", []


def _bound(body: dict[str, Any], betas: set[str]) -> str | None:
    """The API's refusal of a thinking block whose prefix changed (demo_model/binding.py)."""
    try:
        check(body, betas)
    except Refused as refused:
        return refused.message
    return None


def _retryable(code: int) -> bool:
    return code in RETRYABLE or code >= 500


def _drain(conn: socket.socket, wait: float = 1.0) -> None:
    # An RST discards unsent data, so let the kernel hand the sent events over first.
    deadline = time.monotonic() + wait
    try:
        while time.monotonic() < deadline:
            unsent = struct.unpack("i", fcntl.ioctl(conn, termios.TIOCOUTQ, b"\0" * 4))[0]
            if unsent == 0:
                return
            time.sleep(0.005)
    except OSError:
        return


def shutdown(conn: socket.socket) -> None:
    """Shut a socket down both ways, waking any thread blocked on it."""
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
