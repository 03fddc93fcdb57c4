"""uvicorn's httptools protocol with bounded request heads and JSON errors of the one shape.

httptools sets no limit on a URL or on headers, and uvicorn answers a request it cannot parse
(a bad request line, a negative Content-Length...) with plain text. Here a URL over
`MAX_URL_BYTES` gets 414, headers over `MAX_HEADER_BYTES` in all get 431, and anything
unparsable gets 400, each as {"error": {"code", "message", "details"}}, and the connection
closes.
"""

from __future__ import annotations

import json
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_URL_BYTES = 8 * 1024
MAX_HEADER_BYTES = 32 * 1024

REASONS = {400: b"Bad Request", 414: b"URI Too Long", 431: b"Request Header Fields Too Large"}


class HeadRefused(Exception):
    """A request head the server refuses before the app sees it."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_bytes(status: int, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 response carrying the one JSON error shape; it closes the connection."""
    body = json.dumps({"error": {"code": code, "message": message, "details": {}}}).encode()
    head = (
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        b"connection: close\r\n\r\n" % (status, REASONS.get(status, b"Error"), len(body))
    )
    return head + body


class JSONHttpToolsProtocol(HttpToolsProtocol):
    """HttpToolsProtocol whose own refusals are JSON, with limits on the URL and headers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0

    def on_message_begin(self) -> None:
        """A new request: count its head from zero."""
        super().on_message_begin()
        self._head_bytes = 0

    def on_url(self, url: bytes) -> None:
        """Collect the URL, refusing one over the limit."""
        super().on_url(url)
        if len(self.url) > MAX_URL_BYTES:
            raise HeadRefused(414, "uri_too_long", f"The URL is over {MAX_URL_BYTES} bytes.")

    def on_header(self, name: bytes, value: bytes) -> None:
        """Collect a header, refusing headers over the limit in all."""
        self._head_bytes += len(name) + len(value) + 4
        if self._head_bytes > MAX_HEADER_BYTES:
            raise HeadRefused(
                431,
                "request_header_fields_too_large",
                f"The request headers are over {MAX_HEADER_BYTES} bytes in all.",
            )
        super().on_header(name, value)

    def data_received(self, data: bytes) -> None:
        """Feed the parser; answer a refused or unparsable request in the JSON shape."""
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
        except (httptools.HttpParserError, HeadRefused) as err:
            cause = err if isinstance(err, HeadRefused) else err.__context__
            if isinstance(cause, HeadRefused):
                self._refuse(cause.status, cause.code, cause.message)
            else:
                self._refuse(400, "bad_request", "The HTTP request could not be parsed.")

    def send_400_response(self, msg: str) -> None:
        """uvicorn's own 400 (e.g. an invalid header for an upgrade), in the JSON shape."""
        self._refuse(400, "bad_request", msg)

    def _refuse(self, status: int, code: str, message: str) -> None:
        self.logger.warning("refused a request: %s %s", status, message)
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and cycle.response_started:
            # The request's task is answering already: just drop the connection.
            self.transport.close()
            return
        self.transport.write(error_bytes(status, code, message))
        self.transport.close()
