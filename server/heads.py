"""The bytes the host writes: response heads for the app's answers, and its own refusals.

Every response the host makes itself (a refused request, an app that failed, a busy
worker) is worded by the app's `RenderError` (streaming/hosting.py): the app's one error shape.
"""

from __future__ import annotations

import math
import time
from email.utils import formatdate

from config import Timings
from server.wsgi import Request, Response
from streaming.hosting import RenderError

CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
REASONS = {
    400: b"Bad Request",
    408: b"Request Timeout",
    413: b"Content Too Large",
    414: b"URI Too Long",
    431: b"Request Header Fields Too Large",
    500: b"Internal Server Error",
    501: b"Not Implemented",
    503: b"Service Unavailable",
}
# Framing is the host's: the app's hop-by-hop headers are dropped (PEP 3333 forbids them).
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)


class Refused(Exception):
    """A request the host answers itself, with the JSON error shape."""

    def __init__(self, status: int, code: str, message: str, headers: bytes = b"") -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers

    @classmethod
    def too_large(cls, limit: int) -> Refused:
        """413: a request body over `limit` bytes."""
        return cls(413, "request_too_large", f"The request body is over {limit} bytes.")

    @classmethod
    def header_too_large(cls, limit: int) -> Refused:
        """431: request headers over `limit` bytes in all."""
        message = f"The request headers are over {limit} bytes in all."
        return cls(431, "request_header_fields_too_large", message)

    @classmethod
    def busy(cls, timings: Timings) -> Refused:
        """503: the worker takes no more connections; retry after `busy_retry_after`."""
        retry = b"retry-after: %d\r\n" % math.ceil(timings.busy_retry_after)
        return cls(503, "server_busy", "The server is busy; retry later.", retry)


def error_response(refused: Refused, render: RenderError) -> bytes:
    """A whole response worded by the app's `render`; it closes the connection."""
    content_type, body = render(refused.status, refused.code, refused.message)
    head = b"HTTP/1.1 %d %b\r\ncontent-type: %b\r\ncontent-length: %d\r\n" % (
        refused.status,
        REASONS.get(refused.status, b"Error"),
        content_type,
        len(body),
    )
    return b"%bdate: %b\r\n%bconnection: close\r\n\r\n%b" % (
        head,
        http_date(),
        refused.headers,
        body,
    )


def internal_error(render: RenderError) -> Response:
    """The response to a request whose app call failed."""
    content_type, body = render(500, "internal_error", "Something went wrong on our side.")
    return Response(b"500 Internal Server Error", [(b"content-type", content_type)], body)


def has_body(response: Response, request: Request) -> bool:
    """Whether a body follows the head (never for HEAD, 1xx, 204 or 304)."""
    code = int(response.status[:3])
    return code >= 200 and code not in (204, 304) and request.method != "HEAD"


def response_head(
    request: Request, response: Response, keep_alive: bool, chunked: bool | None = None
) -> tuple[bytes, bool]:
    """The status line and headers of the app's response, and whether to keep alive.

    `chunked` is None for a buffered body (it gets content-length), else whether a
    streamed body is chunked (HTTP/1.1) or ends with the connection (HTTP/1.0).
    """
    body = has_body(response, request)
    lines = [b"HTTP/1.1 ", response.status, b"\r\n"]
    dated = False
    for name, value in response.headers:
        lowered = name.lower()
        if lowered in HOP_BY_HOP:
            if lowered == b"connection" and b"close" in value.lower():
                keep_alive = False
            continue
        if lowered == b"content-length" and body:
            continue  # the host's own, from the body it has
        dated = dated or lowered == b"date"
        lines += (name, b": ", value, b"\r\n")
    if not dated:
        lines += (b"date: ", http_date(), b"\r\n")
    if body and chunked is None:
        lines.append(b"content-length: %d\r\n" % len(response.body))  # type: ignore[arg-type]
    elif body and chunked:
        lines.append(b"transfer-encoding: chunked\r\n")
    elif body:
        keep_alive = False  # the end of the connection ends the body
    if not keep_alive:
        lines.append(b"connection: close\r\n")
    elif request.version == "1.0":
        lines.append(b"connection: keep-alive\r\n")
    lines.append(b"\r\n")
    return b"".join(lines), keep_alive


class _Clock:
    """The Date header's value, made at most once a second."""

    second, value = -1, b""


def http_date() -> bytes:
    """The current time as an HTTP date (cached for the second)."""
    now = int(time.time())
    if now != _Clock.second:
        _Clock.value, _Clock.second = formatdate(now, usegmt=True).encode(), now
    return _Clock.value
