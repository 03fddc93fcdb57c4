"""A raw HTTP/1.1 client that sees the framing: status, headers, chunks, closes."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from typing import Any

from tests.waits import PATIENCE


@dataclass
class Reply:
    """One response as it came: status, headers, body, and whether its framing was complete."""

    status: int
    reason: str
    headers: dict[str, str]
    body: bytes = b""
    chunks: list[bytes] | None = None
    complete: bool = True

    def error(self) -> dict[str, Any]:
        """The JSON error shape's inner object."""
        assert self.headers["content-type"] == "application/json"
        payload = json.loads(self.body)
        assert set(payload) == {"error"} and set(payload["error"]) == {"code", "message", "details"}
        return payload["error"]


@dataclass
class Client:
    """A raw connection to the server."""

    port: int
    sock: socket.socket = field(init=False)

    def __post_init__(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=PATIENCE)
        self.file = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        """Send bytes as they are."""
        self.sock.sendall(data)

    def request(
        self, method: str = "GET", path: str = "/", body: bytes = b"", **headers: str
    ) -> None:
        """Send one HTTP/1.1 request."""
        lines = [f"{method} {path} HTTP/1.1", "Host: test"]
        lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
        if body:
            lines.append(f"Content-Length: {len(body)}")
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def reply(self, head_only: bool = False) -> Reply:
        """Read one response off the connection."""
        return read_reply(self.file, head_only)

    def head(self) -> Reply:
        """Read a response's status line and headers only."""
        return read_head(self.file)

    def chunk(self) -> bytes | None:
        """Read one chunk of a chunked body: None for the last one."""
        return read_chunk(self.file)

    def closed(self) -> bool:
        """Wait for the server to close the connection; True if it sent nothing more."""
        try:
            return self.sock.recv(65536) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        """Close our end."""
        self.file.close()
        self.sock.close()


def read_head(file: Any) -> Reply:
    """Parse a response's status line and headers from a binary file."""
    status_line = file.readline()
    if not status_line:
        raise EOFError("the connection closed before a response")
    _version, status, reason = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers: dict[str, str] = {}
    while (line := file.readline()) not in (b"\r\n", b""):
        name, value = line.decode("latin-1").split(":", 1)
        headers[name.strip().lower()] = value.strip()
    return Reply(int(status), reason, headers)


def read_chunk(file: Any) -> bytes | None:
    """One chunk of a chunked body, None for the last; EOFError if the body breaks off."""
    size_line = file.readline()
    if not size_line:
        raise EOFError("the body ended unfinished")
    size = int(size_line.strip(), 16)
    data = file.read(size + 2)
    if len(data) < size + 2 or not data.endswith(b"\r\n"):
        raise EOFError("the body ended unfinished")
    return data[:-2] if size else None


def read_reply(file: Any, head_only: bool = False) -> Reply:
    """Parse one response from a binary file: content-length, chunked, or up to the close."""
    reply = read_head(file)
    if head_only or reply.status < 200 or reply.status in (204, 304):
        return reply
    if reply.headers.get("transfer-encoding") == "chunked":
        reply.chunks = []
        try:
            while (chunk := read_chunk(file)) is not None:
                reply.chunks.append(chunk)
        except (EOFError, ConnectionResetError):
            reply.complete = False
        reply.body = b"".join(reply.chunks)
    elif "content-length" in reply.headers:
        reply.body = file.read(int(reply.headers["content-length"]))
    else:
        reply.body = file.read()
    return reply
