"""One HTTP/1.1 connection on httptools: bounded requests in, WSGI responses and streams out.

A connection is held only while a request is due: its headers must arrive within
`header_timeout` (from the connection, or from the end of the previous response), its body
within `body_timeout`, bounded in size. Requests are served one at a time, in order. A
streamed body (server/wsgi.py's StreamBody) is written part by part from this loop, one
write per part; a client that accepts nothing for `slow_reader` is dropped, and one that
leaves cancels whatever serves it. What llhttp lets through and RFC 9112 refuses is refused
by server/conformance.py: the parser is fed so that every request starts a feed, and each
request line is checked before the parser sees its end.

A connection is in one `State` at a time (server/states.py); TRANSITIONS says which may
follow which, and a state's request deadline (DEADLINES) is armed when it is entered and
cancelled when it is left. Where the parser is in the bytes (`Part`) is apart from it: a
pipelined request is read while the one before it is served. Writes follow the client's flow
control (server/backpressure.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterator

import httptools

from config import Timings
from server.backpressure import Backpressure
from server.bodies import Body
from server.conformance import check_hosts, check_request_line, check_transfer_encoding
from server.heads import (
    CONTINUE,
    Refused,
    error_response,
    has_body,
    internal_error,
    response_head,
)
from server.states import BUSY, DEADLINES, TRANSITIONS, Part, State
from server.wsgi import Request, Response, StreamBody, WSGIPool
from streaming.hosting import AccessLog, RenderError, StreamBroken, no_access_log, plain_error

log = logging.getLogger(__name__)
MAX_URL_BYTES = 8 * 1024
MAX_HEADER_BYTES = 32 * 1024
# httptools gathers one header line whole before it is counted: the raw bytes of a head
# are bounded too, so a header line that never ends cannot grow without bound.
MAX_HEAD_BYTES = MAX_URL_BYTES + MAX_HEADER_BYTES + 1024


class Site:
    """What every connection of one server shares."""

    def __init__(
        self,
        pool: WSGIPool,
        timings: Timings,
        max_body: int,
        express: WSGIPool | None = None,
        express_paths: frozenset[str] = frozenset(),
        render_error: RenderError = plain_error,
        access_log: AccessLog = no_access_log,
        uploads: tuple[frozenset[str], int] = (frozenset(), 0),
    ) -> None:
        self.pool, self.timings, self.max_body = pool, timings, max_body
        # Paths whose bodies may be larger (file uploads), and how large; the app checks them.
        self.upload_paths = frozenset(p.encode("latin-1") for p in uploads[0])
        self.upload_max_body = uploads[1]
        # The app's wording and logging of the answers the host makes itself.
        self.render_error, self.access_log = render_error, access_log
        # Health checks and metrics: a pool of their own, never behind a burst of requests.
        self.express, self.express_paths = express, express_paths
        self.connections: set[HttpConnection] = set()
        self.stopping = False
        self.emptied = asyncio.Event()  # set when the last connection closes while stopping

    def body_limit(self, url: bytes) -> int:
        """The largest body a request for `url` may send."""
        if self.is_upload(url):
            return max(self.max_body, self.upload_max_body)
        return self.max_body

    def is_upload(self, url: bytes) -> bool:
        """Whether `url` takes uploads: its body is spooled to a file, with an idle deadline."""
        return url.split(b"?", 1)[0] in self.upload_paths

    def pool_for(self, request: Request) -> WSGIPool:
        """The express pool for an express path (GET or HEAD), else the app's pool."""
        if self.express is not None and request.method in ("GET", "HEAD"):
            path = request.target.partition(b"?")[0]
            if path.decode("latin-1") in self.express_paths:
                return self.express
        return self.pool


class HttpConnection(asyncio.Protocol):
    """One client connection: parses its requests and writes their responses in order."""

    def __init__(self, site: Site) -> None:
        self.site, self.loop = site, asyncio.get_running_loop()
        self.parser = httptools.HttpRequestParser(self)
        self.queue: deque[tuple[Request, bool]] = deque()  # pipelined requests, read whole
        self.task: asyncio.Task[None] | None = None  # serving a request: busy
        self.state = State.NEW
        self.part = Part.BETWEEN
        self._deadline: asyncio.TimerHandle | None = None  # the state's, per DEADLINES
        self.writes = Backpressure(self.loop, site.timings.slow_reader)
        self._read_paused = self._continue = False
        self._began = self.loop.time()
        # The request line being read (None once it was checked, until the request ends).
        self._line: bytearray | None = bytearray()
        self._reset()

    def _reset(self) -> None:
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body = Body(self.site.max_body)
        self._head_size = self._raw_head = self._declared = 0
        self._chunked = self._expect = False

    def _enter(self, state: State) -> None:
        """Move to `state`: the old state's deadline ends, the new one's starts (the head's
        deadline runs on from IDLE into READING_HEAD)."""
        if state not in TRANSITIONS[self.state]:
            raise RuntimeError(f"a connection cannot go from {self.state} to {state}")
        deadline, kept = DEADLINES.get(state), DEADLINES.get(self.state)
        self.state = state
        if deadline == kept and deadline is not None:
            return
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if deadline is not None:
            delay = getattr(self.site.timings, deadline)
            self._deadline = self.loop.call_later(delay, self._expire)

    def _close(self) -> None:
        """Close the transport (once); nothing more is read or served."""
        if self.state is not State.CLOSED:
            self._enter(State.CLOSED)
            self.transport.close()

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Register, and wait for a request's headers within the header deadline."""
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        peer, local = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        self.client = (peer[0], peer[1]) if isinstance(peer, tuple) else None
        self.server = (local[0], local[1]) if isinstance(local, tuple) else None
        self.site.connections.add(self)
        if self.site.stopping:
            self._close()
        else:
            self._enter(State.IDLE)

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone: stop whatever serves it."""
        if self.state is not State.CLOSED:
            self._enter(State.CLOSED)
        self.writes.cancel()
        if self.task is not None:
            self.task.cancel()
        connections = self.site.connections
        connections.discard(self)
        if self.site.stopping and not connections:
            self.site.emptied.set()

    def data_received(self, data: bytes) -> None:
        """Feed the parser; refuse a request that is unparsable, malformed or over a limit."""
        if self.state in (State.DRAINING, State.CLOSED):
            return
        if self.state is State.IDLE:
            self._enter(State.READING_HEAD)
        try:
            for piece in self._pieces(data):
                self._feed(piece)
        except httptools.HttpParserUpgrade:
            self._drain()  # served as a plain request: the connection ends after it
        except Refused as refused:
            self._refuse(refused)
        except httptools.HttpParserError as err:
            cause = err.__context__
            if isinstance(cause, Refused):
                self._refuse(cause)
            else:
                if cause is not None:
                    log.error("failed while parsing a request", exc_info=cause)
                self._refuse(Refused(400, "bad_request", "The HTTP request could not be parsed."))

    def _pieces(self, data: bytes) -> Iterator[memoryview]:
        """`data` cut so that every request starts a piece (lazily: each cut is made after
        the piece before it was fed, from what the parser then says)."""
        view, start = memoryview(data), 0
        while start < len(data):
            end = self._cut(data, start)
            yield view[start:end]
            start = end

    def _cut(self, data: bytes, start: int) -> int:
        """The end of the piece from `start`: a request line, the rest of a head, a body of
        known length, or one line of a chunked body (or of a head arriving in parts)."""
        if self.part is Part.BODY and not self._chunked:
            return start + max(1, self._declared - self._body.size)
        if self._line is None and self.part is Part.HEAD:
            end = data.find(b"\r\n\r\n", start)
            if end >= 0:
                return end + 4
        return data.find(b"\n", start) + 1 or len(data)

    def _feed(self, piece: memoryview) -> None:
        """Feed one piece, checking a request line before the parser sees its end."""
        if self._line is not None:
            self._line += piece
            if self._line.endswith(b"\n"):
                line, self._line = bytes(self._line), None
                if line == b"\r\n":
                    self._line = bytearray()  # an empty line before a request is ignored
                else:
                    check_request_line(line)
            elif len(self._line) > MAX_URL_BYTES + 32:
                raise Refused(414, "uri_too_long", f"The URL is over {MAX_URL_BYTES} bytes.")
        in_head = self.part is Part.HEAD
        self.parser.feed_data(piece)
        if in_head and self.part is Part.HEAD:
            self._raw_head += len(piece)
            if self._raw_head > MAX_HEAD_BYTES:
                raise Refused.header_too_large(MAX_HEADER_BYTES)

    def pause_writing(self) -> None:
        """The client's buffers are full: it has `slow_reader` to take some bytes."""
        self.writes.pause(self._drop_slow)

    def resume_writing(self) -> None:
        """The client took bytes again: a waiting stream may write."""
        self.writes.resume()

    # httptools callbacks

    def on_message_begin(self) -> None:
        """A request starts; a pipelined one waits, and the socket is not read meanwhile."""
        self._reset()
        self._began = self.loop.time()
        self.part = Part.HEAD
        if self.task is not None and not self._read_paused:
            self._read_paused = True
            self.transport.pause_reading()

    def on_url(self, url: bytes) -> None:
        """Collect the URL, refusing one over the limit."""
        self._url += url
        if len(self._url) > MAX_URL_BYTES:
            raise Refused(414, "uri_too_long", f"The URL is over {MAX_URL_BYTES} bytes.")

    def on_header(self, name: bytes, value: bytes) -> None:
        """Collect a header, refusing headers over the limit in all; drop a trailer field."""
        self._head_size += len(name) + len(value) + 4
        if self._head_size > MAX_HEADER_BYTES:
            raise Refused.header_too_large(MAX_HEADER_BYTES)
        if self.part is Part.BODY:
            # A chunked body's trailer: never merged into the headers (RFC 9110, 6.5.1), so
            # none can add a Host or credentials after the head was checked.
            return
        self._headers.append((name, value))
        lowered = name.lower()
        if lowered == b"content-length":
            self._declared = int(value) if value.strip().isdigit() else 0
        elif lowered == b"transfer-encoding":
            check_transfer_encoding(value, self.parser.get_http_version())
            self._chunked = True
        elif lowered == b"expect":
            self._expect = value.strip().lower() == b"100-continue"

    def on_headers_complete(self) -> None:
        """Check the declared body; answer 100-continue; the body deadline starts."""
        self.part = Part.BODY
        hosts = [value for name, value in self._headers if name.lower() == b"host"]
        check_hosts(hosts, self.parser.get_http_version())
        max_body = self.site.body_limit(self._url)
        self._body = Body(max_body, self.site.is_upload(self._url), self.loop.time())
        if self._declared > max_body:
            raise Refused.too_large(max_body)
        has_body = self._declared > 0 or self._chunked
        if has_body and self.parser.should_upgrade():
            # httptools skips the body of an upgrade request; we upgrade to nothing.
            raise Refused(400, "bad_request", "Upgrade requests with a body are not served.")
        self._continue = self._expect and has_body and self.parser.get_http_version() == "1.1"
        if self.task is None:
            self._enter(State.READING_BODY)
            self._send_continue()

    def on_body(self, body: bytes) -> None:
        """Collect the body (an upload's in a file), refusing one over the limit."""
        self._body.add(body, self.loop.time())

    def on_message_complete(self) -> None:
        """A whole request: serve it now, or after the ones before it."""
        parser = self.parser
        request = Request(
            parser.get_method().decode("ascii"),
            self._url,
            parser.get_http_version(),
            self._headers,
            self._body.take(),
            self.client,
            self.server,
            self.gone,
        )
        self.part = Part.BETWEEN
        self._line = bytearray()  # the next bytes are the next request's line
        self.queue.append((request, parser.should_keep_alive()))
        if self.task is None:
            self._next()

    # Serving

    def gone(self) -> bool:
        """Whether the client closed the connection (asked from the app's threads)."""
        return self.state is State.CLOSED

    def stop(self) -> None:
        """The server stops: close now if idle, else once the current response is done."""
        if self.task is None:
            self._close()

    def _next(self) -> None:
        self._enter(State.SERVING)
        request, keep_alive = self.queue.popleft()
        self.task = self.loop.create_task(self._serve(request, keep_alive))

    async def _serve(self, request: Request, keep_alive: bool) -> None:
        try:
            try:
                response = await self.site.pool_for(request).submit(request)
            except Exception:
                log.exception("the WSGI app failed: %s %r", request.method, request.target)
                response = internal_error(self.site.render_error)
            keep_alive = keep_alive and self.state is State.SERVING and not self.site.stopping
            if type(response.body) is StreamBody:
                if self.state is State.SERVING:
                    self._enter(State.STREAMING)
                keep_alive = await self._stream(request, response, keep_alive)
            else:
                head, keep_alive = response_head(request, response, keep_alive)
                if has_body(response, request):
                    head += response.body  # type: ignore[operator]
                self.transport.write(head)
            if keep_alive and self.writes.paused:
                await self.writes.writable()  # pipelined responses never pile up unread
        except Exception:
            log.exception("failed while answering %s %r", request.method, request.target)
            keep_alive = False
        finally:
            if not isinstance(request.body, bytes):
                request.body.close()
        self.task = None
        self._done(keep_alive)

    def _done(self, keep_alive: bool) -> None:
        if not keep_alive or self.site.stopping or self.state not in BUSY:
            self._close()
        elif self.queue:
            self._next()
        else:
            if self._read_paused:
                self._read_paused = False
                self.transport.resume_reading()
            if self.part is Part.BODY:
                self._enter(State.READING_BODY)
                self._send_continue()
            else:
                self._enter(State.READING_HEAD if self.part is Part.HEAD else State.IDLE)

    async def _stream(self, request: Request, response: Response, keep_alive: bool) -> bool:
        """Write a StreamBody's parts as they come; False once the connection must end."""
        chunked = request.version == "1.1"
        head, keep_alive = response_head(request, response, keep_alive, chunked)
        self.transport.write(head)
        if not has_body(response, request):
            return keep_alive
        body = None
        try:
            body = response.body.factory()  # type: ignore[union-attr]
            write = self.transport.write
            async for part in body:
                if part:
                    write(b"%x\r\n%b\r\n" % (len(part), part) if chunked else part)
                    if self.writes.paused:
                        await self.writes.writable()
        except Exception as exc:
            # No final chunk: the client sees an unfinished response and reconnects.
            if isinstance(exc, StreamBroken):
                log.debug("a stream ended unfinished: %s", exc)
            else:
                log.exception("a stream failed: %s %r", request.method, request.target)
            self.transport.close()
            return False
        finally:
            aclose = getattr(body, "aclose", None)
            if aclose is not None:
                await aclose()
        if chunked:
            write(b"0\r\n\r\n")
        return keep_alive

    # Deadlines and refusals

    def _expire(self) -> None:
        self._deadline = None
        if self.state not in DEADLINES:
            return
        if self.state is State.IDLE:
            self._close()  # an idle connection: nothing to answer
            return
        part = "headers" if self.state is State.READING_HEAD else "body"
        timings = self.site.timings
        seconds = timings.header_timeout if part == "headers" else timings.body_timeout
        message = f"The request {part} did not arrive within {seconds:g} seconds."
        if part == "body" and self._body.upload:
            # An upload is cut only when no bytes came for `body_timeout` (a slow link is not).
            idle = self.loop.time() - self._body.last
            if idle < seconds:
                self._deadline = self.loop.call_later(seconds - idle, self._expire)
                return
            message = f"No bytes of the request body came for {seconds:g} seconds."
        self._refuse(Refused(408, "request_timeout", message))

    def _drain(self) -> None:
        """Read nothing more: the response being written, if any, ends the connection."""
        if self.state is not State.DRAINING:
            self._enter(State.DRAINING)

    def _refuse(self, refused: Refused) -> None:
        self._body.discard()
        log.info("refused a request: %s %s", refused.status, refused.message)
        self._log(refused.status)
        if self.task is None:
            self.transport.write(error_response(refused, self.site.render_error))
            self._close()
        else:
            # A pipelined request, behind a response being written: that response ends the
            # connection, and the client sends the refused request again on a new one.
            self._drain()
            if not self._read_paused:
                self._read_paused = True
                self.transport.pause_reading()

    def _log(self, status: int) -> None:
        """An access line for a response the host made itself (the app logs its own)."""
        try:
            method = self.parser.get_method().decode("ascii")
        except (httptools.HttpParserError, UnicodeDecodeError):
            method = "-"
        path = self._url.split(b"?", 1)[0].decode("latin-1") or "-"
        self.site.access_log(method, path, status, self.loop.time() - self._began)

    def _send_continue(self) -> None:
        if self._continue:
            self._continue = False
            self.transport.write(CONTINUE)

    def _drop_slow(self) -> None:
        log.info("dropped a client that read nothing for %g s", self.site.timings.slow_reader)
        self.transport.abort()
